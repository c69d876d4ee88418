"""The troubleshooting page shows what compose-model-replica writes: its 401 example is the
status the code builds from a kubelet-shaped pod, and each row's Serving message starts as the
code writes it."""
from __future__ import annotations

import dataclasses
import re

import yaml
from modelplane import paths
from modelplane.observer import reports
from modelplane.workloads import engine_status as ES

from tests.observer import pods as P

PAGE = paths.ROOT / "docs" / "ml" / "troubleshooting.md"
POD = "qwen3-8b-0-edge-east-qwen3-8b-5d8f9c7b6-x2kqp"


def serving_of(pod: dict) -> tuple[list[dict], ES.Serving]:
    (r,) = reports([pod])
    states = ES.read({"status": {"atProvider": {"manifest": r.manifest()}}})
    return ES.status_entries(states), ES.serving(["qwen3-8b-0-edge-east-qwen3-8b"], states)


def test_the_401_example_is_what_the_replica_reports():
    text = PAGE.read_text(encoding="utf-8")
    block = re.search(r'```yaml title="Shape: status of a ModelReplica whose engine got a 401[^"]*"\n(.*?)```',
                      text, re.DOTALL)
    assert block, "the page's 401 example is gone"
    shown = yaml.safe_load(block.group(1))["status"]
    entries, serving = serving_of(P.hub_401(name=POD))
    assert shown["engines"] == entries
    (cond,) = shown["conditions"]
    assert cond["reason"] == serving.reason
    head = cond["message"].removesuffix("...")
    assert serving.message.startswith(head), f"-page +code:\n-{head}\n+{serving.message}"


def test_each_row_shows_the_message_the_code_writes():
    text = PAGE.read_text(encoding="utf-8")
    for pod in (P.oom_killed(name=POD), P.hub_401(name=POD), P.crash_loop(name=POD), P.image_pull(name=POD),
                P.missing_secret(name=POD)):
        (r,) = reports([pod])
        first = r.engines[0]
        head = ES.describe(dataclasses.replace(first, message="")).removeprefix(f"pod {POD} ")
        assert f"`pod ... {head}: " in text, head
