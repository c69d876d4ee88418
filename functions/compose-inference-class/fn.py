"""compose-inference-class: check an InferenceClass and publish its summary.

A class composes nothing; it is read by clusters and the scheduler. This
function rejects what admission cannot (names, quantities, versions) and
reports Ready with a one-line description of the devices and the clouds
it can provision on (GKE, EKS, AKS, Nebius, Vultr; Existing clusters can always use it).
"""
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.xr import parse
from modelplane.platform.cluster import PROVISIONING_SOURCES
from modelplane.platform.inference_class import check_class, summarize
from modelplane.schemas.inference_class import InferenceClass


def compose(c: Composition) -> None:
    parse(InferenceClass, c.xr)  # shapes first: the checks below read plain data
    check_class(c.spec)
    summary = summarize(c.spec)
    providers = sorted(PROVISIONING_SOURCES.get(name, name.upper()) for name in (c.spec.get("provisioning") or {}))
    c.set_status(summary=summary, providers=providers)
    c.set_ready(True)
