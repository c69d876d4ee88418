"""Engine pods shaped as a kubelet reports them (field for field as ``kubectl get pod -o yaml``
shows them), for the engine observer's tests."""
from __future__ import annotations

import copy
from typing import Any

NS = "ml-team"

# The tail of a vLLM start whose token may not read a gated model: huggingface_hub's
# GatedRepoError as the kubelet keeps it with FallbackToLogsOnError (the log's last lines).
HF_401 = (
    "    raise _format(GatedRepoError, message, response) from e\n"
    "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-6748a0f2-0c2f)\n"
    "\n"
    "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/"
    "config.json.\n"
    "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted. You must have access to it and be "
    "authenticated to access it. Please log in.\n"
)
OOM_TAIL = "INFO 11-28 12:01:07 [gpu_model_runner.py:1843] Loading model weights took 14.99 GiB\n"
CRASH_TAIL = "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens " \
             "that can be stored in KV cache (52416).\n"


def pod(name: str = "qwen3-8b-0-prod-a-qwen3-8b-7d9f8-abcde", *, namespace: str = NS, deployment: str = "qwen3-8b",
        replica: str = "0", engine: str = "qwen3-8b", role: str = "standalone", uid: str | None = None,
        container: dict | None = None, phase: str = "Running", conditions: list | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if conditions is not None:
        status["conditions"] = conditions
    if container is not None:
        status["containerStatuses"] = [container]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}",
                     "labels": {"modelplane.ai/deployment": deployment, "modelplane.ai/replica": replica,
                                "modelplane.ai/engine": engine, "modelplane.ai/role": role,
                                "pod-template-hash": "7d9f8"}},
        "spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                                 "terminationMessagePolicy": "FallbackToLogsOnError"}]},
        "status": status,
    }


def engine_status(state: dict, *, restarts: int = 0, ready: bool = False, last: dict | None = None) -> dict:
    out = {"name": "engine", "image": "vllm/vllm-openai:v0.23.0", "imageID": "", "containerID": "containerd://1f2e",
           "started": "running" in state, "ready": ready, "restartCount": restarts, "state": state,
           "lastState": {"terminated": last} if last else {}}
    return copy.deepcopy(out)


def terminated(reason: str, code: int, message: str = "") -> dict:
    out = {"reason": reason, "exitCode": code, "containerID": "containerd://1f2e",
           "startedAt": "2026-11-28T12:00:41Z", "finishedAt": "2026-11-28T12:01:09Z"}
    if message:
        out["message"] = message
    return out


def healthy(**over: Any) -> dict:
    return pod(container=engine_status({"running": {"startedAt": "2026-11-28T12:00:41Z"}}, ready=True), **over)


def oom_killed(**over: Any) -> dict:
    return pod(container=engine_status(
        {"waiting": {"reason": "CrashLoopBackOff",
                     "message": "back-off 40s restarting failed container=engine pod=x_ml-team(uid)"}},
        restarts=3, last=terminated("OOMKilled", 137, OOM_TAIL)), **over)


def hub_401(**over: Any) -> dict:
    """The first exit, before the kubelet backs off: Terminated with the log's tail."""
    return pod(container=engine_status({"terminated": terminated("Error", 1, HF_401)}), phase="Running", **over)


def crash_loop(**over: Any) -> dict:
    return pod(container=engine_status(
        {"waiting": {"reason": "CrashLoopBackOff",
                     "message": "back-off 5m0s restarting failed container=engine pod=x_ml-team(uid)"}},
        restarts=7, last=terminated("Error", 1, CRASH_TAIL)), **over)


def image_pull(**over: Any) -> dict:
    return pod(container=engine_status(
        {"waiting": {"reason": "ImagePullBackOff",
                     "message": 'Back-off pulling image "vllm/vllm-openai:v0.99.0": ErrImagePull: failed to pull '
                                'and unpack image "docker.io/vllm/vllm-openai:v0.99.0": not found'}}),
        phase="Pending", **over)


def missing_secret(**over: Any) -> dict:
    return pod(container=engine_status(
        {"waiting": {"reason": "CreateContainerConfigError", "message": 'secret "hf-token" not found'}}),
        phase="Pending", **over)


def unschedulable(**over: Any) -> dict:
    return pod(phase="Pending", conditions=[{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are available: "
                   "3 Preemption is not helpful for scheduling."}], **over)
