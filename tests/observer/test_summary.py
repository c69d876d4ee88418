"""The summariser: one real-shaped engine pod in, the record an ML team reads out."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.observer import engine_states
from modelplane.workloads.engine_status import MESSAGE_TAIL, EngineState

from tests.observer import pods as P

POD = "qwen3-8b-0-prod-a-qwen3-8b-7d9f8-abcde"


@dataclass
class Case:
    name: str
    pod: dict
    want: EngineState
    failing: bool


CASES = [
    Case("healthy: running and ready, nothing to say", P.healthy(),
         EngineState(POD, "qwen3-8b", "standalone", "Running", ready=True), failing=False),
    Case("OOMKilled: the crash loop's last exit is the OOM kill, with the log's tail",
         P.oom_killed(),
         EngineState(POD, "qwen3-8b", "standalone", "Waiting", reason="CrashLoopBackOff", exit_reason="OOMKilled",
                     exit_code=137, restarts=3, message=P.OOM_TAIL.strip()), failing=True),
    Case("401 from huggingface.co: exit 1 with the hub's words", P.hub_401(),
         EngineState(POD, "qwen3-8b", "standalone", "Terminated", reason="Error", exit_reason="Error", exit_code=1,
                     message=P.HF_401.strip()), failing=True),
    Case("crash loop: restarts counted, the engine's error rather than the back-off message", P.crash_loop(),
         EngineState(POD, "qwen3-8b", "standalone", "Waiting", reason="CrashLoopBackOff", exit_reason="Error",
                     exit_code=1, restarts=7, message=P.CRASH_TAIL.strip()), failing=True),
    Case("ImagePullBackOff: the pull's own message", P.image_pull(),
         EngineState(POD, "qwen3-8b", "standalone", "Waiting", reason="ImagePullBackOff",
                     message='Back-off pulling image "vllm/vllm-openai:v0.99.0": ErrImagePull: failed to pull and '
                             'unpack image "docker.io/vllm/vllm-openai:v0.99.0": not found'), failing=True),
    Case("CreateContainerConfigError: the missing Secret named", P.missing_secret(),
         EngineState(POD, "qwen3-8b", "standalone", "Waiting", reason="CreateContainerConfigError",
                     message='secret "hf-token" not found'), failing=True),
    Case("not scheduled: the scheduler's reason, not a failure of the engine", P.unschedulable(),
         EngineState(POD, "qwen3-8b", "standalone", "Pending", reason="Unschedulable",
                     message="0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are "
                             "available: 3 Preemption is not helpful for scheduling."), failing=False),
    Case("just created: pending, no reason", P.pod(phase="Pending"),
         EngineState(POD, "qwen3-8b", "standalone", "Pending"), failing=False),
    Case("still starting: ContainerCreating is not failing",
         P.pod(container=P.engine_status({"waiting": {"reason": "ContainerCreating"}}), phase="Pending"),
         EngineState(POD, "qwen3-8b", "standalone", "Waiting", reason="ContainerCreating"), failing=False),
    Case("running again after an OOM kill: the last exit is kept, not failing now",
         P.pod(container=P.engine_status({"running": {}}, ready=False, restarts=1,
                                         last=P.terminated("OOMKilled", 137))),
         EngineState(POD, "qwen3-8b", "standalone", "Running", exit_reason="OOMKilled", exit_code=137, restarts=1),
         failing=False),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_engine_states(case):
    got = engine_states(case.pod)
    assert got == [case.want], f"-want +got:\n-{case.want}\n+{got}"
    assert got[0].failing is case.failing


def test_a_long_message_keeps_its_tail_bounded():
    long = "x" * 5000 + "\nhuggingface_hub.errors.GatedRepoError: 401 Client Error."
    (got,) = engine_states(P.pod(container=P.engine_status({"terminated": P.terminated("Error", 1, long)})))
    assert len(got.message) == MESSAGE_TAIL
    assert got.message.startswith("…")
    assert got.message.endswith("401 Client Error.")


def test_other_containers_are_not_the_engine():
    p = P.healthy()
    p["status"]["containerStatuses"].insert(0, {**P.engine_status({"waiting": {"reason": "CrashLoopBackOff"}}),
                                                "name": "routing-sidecar"})
    (got,) = engine_states(p)
    assert (got.state, got.ready) == ("Running", True)
