"""physical.kubelet: a bound pod whose Secret its cluster lacks does not start."""
from __future__ import annotations

from dataclasses import dataclass

from modelplane.physical import kubelet

HAVE = {("ml-team", "hf"): frozenset({"token"})}


def env(name: str, key: str = "token", optional: bool | None = None) -> dict:
    ref = {"name": name, "key": key, **({"optional": optional} if optional is not None else {})}
    return {"containers": [{"name": "engine", "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": ref}}]}]}


@dataclass
class Case:
    name: str
    spec: dict
    want: str


CASES = [
    Case("env from a present Secret starts", env("hf"), ""),
    Case("env from an absent Secret waits", env("gone"), 'CreateContainerConfigError: secret "gone" not found'),
    Case("env from an absent key waits", env("hf", key="other"),
         "CreateContainerConfigError: couldn't find key other in Secret ml-team/hf"),
    Case("optional env starts", env("gone", optional=True), ""),
    Case("envFrom an absent Secret waits", {"containers": [{"name": "e", "envFrom": [{"secretRef": {"name": "gone"}}]}]},
         'CreateContainerConfigError: secret "gone" not found'),
    Case("a volume of an absent Secret fails to mount",
         {"volumes": [{"name": "tok", "secret": {"secretName": "gone"}}], "containers": [{"name": "e"}]},
         'FailedMount: MountVolume.SetUp failed for volume "tok" : secret "gone" not found'),
    Case("an optional volume mounts", {"volumes": [{"name": "tok", "secret": {"secretName": "gone", "optional": True}}],
                                       "containers": [{"name": "e"}]}, ""),
    Case("a missing pull Secret does not stop a pull", {"imagePullSecrets": [{"name": "gone"}],
                                                        "containers": [{"name": "e"}]}, ""),
]


def test_waiting():
    for case in CASES:
        assert kubelet.waiting("ml-team", case.spec, HAVE) == case.want, case.name


def test_secrets_of_reads_data_and_string_data_keys():
    got = kubelet.secrets_of({("Secret", "ml-team", "a"): {"data": {"x": ""}, "stringData": {"y": "1"}},
                              ("ConfigMap", "ml-team", "b"): {"data": {"z": ""}}})
    assert got == {("ml-team", "a"): frozenset({"x", "y"})}
