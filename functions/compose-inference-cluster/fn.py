"""compose-inference-cluster: GPU capacity and the inference stack on it.

Recipe (docs/contracts.md, "InferenceCluster status"): read the XR and its
inputs (the pools' InferenceClasses, the ModelReplicas placed here), compose
the cloud's network, cluster and node pools (nothing for Existing) with the
order they may be deleted in, the provider configs that reach it (which the
cluster, its pools and its kubeconfig's writer outlive), the inference stack
and the in-cluster gateway, then publish status.pools with allocations and
say what is still provisioning.
"""
from modelplane.pipeline.composition import Composition
from modelplane.platform import cluster


def compose(c: Composition) -> None:
    plan = cluster.read(c)
    inputs = cluster.require(c, plan)
    if cluster.nothing_fetched(inputs):
        cluster.wait_for_inputs(c)
        return
    rows = cluster.cloud(c, plan, inputs)
    cluster.deletion_order(c, plan)
    cluster.access(c, plan, inputs)
    cluster.hold_cloud(c, plan)
    users = cluster.stack_and_gateway(c, plan)
    cluster.report(c, plan, inputs, rows, users)
