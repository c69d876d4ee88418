"""Pydantic models of the Modelplane XRs, generated from apis/ by
``python -m modelplane.dev.schemagen`` (``make schemas``); never hand-edited, and
tests/apis/test_schemas_fresh.py fails when they are stale.

Each module is named after its kind (``model_deployment``) and its top-level
class is the kind (``ModelDeployment``, with ``ModelDeploymentSpec`` and
``ModelDeploymentStatus``). Models accept undeclared fields (Crossplane adds
``spec.crossplane`` and ``status.conditions``).
"""
from modelplane.schemas.inference_class import InferenceClass
from modelplane.schemas.inference_cluster import InferenceCluster
from modelplane.schemas.inference_gateway import InferenceGateway
from modelplane.schemas.model_cache import ModelCache
from modelplane.schemas.model_deployment import ModelDeployment
from modelplane.schemas.model_endpoint import ModelEndpoint
from modelplane.schemas.model_replica import ModelReplica
from modelplane.schemas.model_service import ModelService

# Kind -> model, for code that handles any XR.
MODELS = {
    m.__name__: m
    for m in (
        InferenceClass, InferenceCluster, InferenceGateway, ModelCache,
        ModelDeployment, ModelEndpoint, ModelReplica, ModelService,
    )
}

__all__ = [*MODELS, "MODELS"]
