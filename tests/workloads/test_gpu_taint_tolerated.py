"""CPU-only pods that must run on GPU-only clusters tolerate the GPU taint.

GKE, EKS and AKS clusters are made of GPU pools only (the default pool is
removed) and every node carries ``nvidia.com/gpu``: a pod without the
toleration stays Pending there forever (found on the lab).
"""
from __future__ import annotations

from modelplane.modelcache import hydrate
from modelplane.workloads import gang
from modelplane.workloads.pods import GPU_TOLERATION

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def tolerates(pod_spec: dict, taint: dict) -> bool:
    return any(t.get("key") == taint["key"] and t.get("effect") == taint["effect"]
               and (t.get("operator") == "Exists" or t.get("value") == taint["value"])
               for t in pod_spec.get("tolerations") or [])


def test_the_hydration_job_tolerates_the_gpu_taint():
    obj = hydrate.job_object("qwen", "ml-team", "gke-us-central", "gke-us-central", "Qwen/Qwen3-8B", "main", False)
    pod = obj["spec"]["forProvider"]["manifest"]["spec"]["template"]["spec"]
    assert tolerates(pod, GPU_TAINT)


def test_the_endpoint_picker_tolerates_the_gpu_taint():
    epp = gang.endpoint_picker("qwen-0", "ml-team", "qwen-0", {}, {})
    pod = epp["deployment"]["spec"]["template"]["spec"]
    assert tolerates(pod, GPU_TAINT)
    assert GPU_TOLERATION["operator"] == "Exists"
