"""How a cached model path reaches the engine, by image and version (modelplane.workloads.engines).

The rows are the contract the upgrade page states: a vLLM image from v0.14.0 takes the path
first, everything else keeps ``--model=/mnt/models`` appended, as before this rule existed.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.mockengine import config as mock
from modelplane.semver import Version
from modelplane.workloads import engines, pods


@dataclass
class Case:
    name: str
    image: str
    want: str                       # engines.POSITIONAL or engines.FLAG


FORMS = [
    Case("a current vLLM release", "vllm/vllm-openai:v0.23.0", engines.POSITIONAL),
    Case("the first release running vllm serve", "vllm/vllm-openai:v0.14.0", engines.POSITIONAL),
    Case("the last release running the api_server module", "vllm/vllm-openai:v0.13.0", engines.FLAG),
    Case("an old release", "vllm/vllm-openai:v0.8.5", engines.FLAG),
    Case("a tag without the v", "vllm/vllm-openai:0.23.0", engines.POSITIONAL),
    Case("a build-flavour suffix counts by its numbers", "vllm/vllm-openai:v0.23.0-cu129", engines.POSITIONAL),
    Case("the ROCm image", "vllm/vllm-openai-rocm:v0.23.0", engines.POSITIONAL),
    Case("a registry in front", "docker.io/vllm/vllm-openai:v0.23.0", engines.POSITIONAL),
    Case("a tag and a digest: the tag is read", "vllm/vllm-openai:v0.23.0@sha256:" + "a" * 64, engines.POSITIONAL),
    Case("latest names no release", "vllm/vllm-openai:latest", engines.FLAG),
    Case("nightly names no release", "vllm/vllm-openai:nightly", engines.FLAG),
    Case("a bare digest names no release", "vllm/vllm-openai@sha256:" + "a" * 64, engines.FLAG),
    Case("no tag at all", "vllm/vllm-openai", engines.FLAG),
    Case("a release candidate is not a release", "vllm/vllm-openai:v0.14.0rc1", engines.FLAG),
    Case("four numbers are not a release", "vllm/vllm-openai:v0.10.1.1", engines.FLAG),
    Case("rocm/vllm tags are not versions", "rocm/vllm:rocm7.0.0_vllm_0.11.2_20251210", engines.FLAG),
    Case("not a vLLM image", "lmsysorg/sglang:v0.5.19", engines.FLAG),
    Case("no image", "", engines.FLAG),
]


@pytest.mark.parametrize("case", FORMS, ids=[c.name for c in FORMS])
def test_model_form(case: Case):
    assert engines.model_form(case.image) == case.want


def test_release_reads_the_numbers_of_the_tag():
    assert engines.release("vllm/vllm-openai:v0.23.0") == Version.parse("0.23.0")
    assert engines.release("localhost:5000/vllm/vllm-openai:v0.24.1-ubuntu2404") == Version.parse("0.24.1")
    assert engines.release("vllm/vllm-openai:v0.023.0") is None, "a leading zero is no release number"
    assert engines.release("vllm/vllm-openai:latest") is None


@pytest.mark.parametrize("image,want", [
    ("vllm/vllm-openai:v0.23.0", engines.VLLM_SERVE),
    ("vllm/vllm-openai:v0.13.0", engines.VLLM_API_SERVER),
    ("vllm/vllm-openai:latest", engines.VLLM_SERVE),
    ("rocm/vllm:rocm7.0.0_vllm_0.11.2_20251210", engines.VLLM_SERVE),
    ("lmsysorg/sglang:v0.5.19", None),
])
def test_vllm_entrypoint(image, want):
    assert engines.vllm_entrypoint(image) == want


# --- what a deployment with a ModelCache gets, old pinned version against new ----------------------

ARGS = ["--served-model-name=qwen3-8b", "--max-model-len=16384"]


def _composed_args(image: str, args: list[str] = ARGS) -> list[str]:
    template = {"spec": {"containers": [{"name": "engine", "image": image, "args": list(args)}]}}
    pod = pods.pod_template(template, pods.PodOptions(labels={}, pool="h100", cache_pvc="modelcache-qwen",
                                                      extra_args=("--port=8200",)))
    return pod["spec"]["containers"][0]["args"]


@pytest.mark.parametrize("image,want", [
    # Exactly what every release composed before the rule: such replicas do not roll.
    ("vllm/vllm-openai:v0.13.0", [*ARGS, "--model=/mnt/models", "--port=8200"]),
    ("vllm/vllm-openai:latest", [*ARGS, "--model=/mnt/models", "--port=8200"]),
    # The documented form: the template changes, so these replicas roll once.
    ("vllm/vllm-openai:v0.23.0", ["/mnt/models", *ARGS, "--port=8200"]),
])
def test_a_cached_member_gets_the_form_its_image_takes(image, want):
    assert _composed_args(image) == want


@pytest.mark.parametrize("args", [
    ["Qwen/Qwen3-8B", "--served-model-name=q"],
    ["--model=Qwen/Qwen3-8B"],
    ["--model", "Qwen/Qwen3-8B"],
])
def test_a_member_naming_its_model_gets_no_path(args):
    assert _composed_args("vllm/vllm-openai:v0.23.0", args) == [*args, "--port=8200"]


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.13.0", "vllm/vllm-openai:v0.23.0",
                                   "vllm/vllm-openai:latest", "vllm/vllm-openai-rocm:v0.23.0"])
def test_the_engine_serves_the_cached_model_in_either_form(image):
    """The composed args, run by the image's entrypoint as the mock engine reads it, load /mnt/models."""
    got = mock.from_argv(_composed_args(image), image, args_only=True, container="engine")
    assert (got.model, got.served_names, got.port) == ("/mnt/models", ("qwen3-8b",), 8200)


def test_the_path_first_form_would_be_lost_on_an_old_image():
    """Why the rule is gated: before v0.14.0 the entrypoint never reads a positional model."""
    with pytest.raises(mock.ConfigError, match="ignores the positional model"):
        mock.from_argv(["/mnt/models", *ARGS], "vllm/vllm-openai:v0.13.0", args_only=True)
