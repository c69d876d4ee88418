"""Which engine a container runs and what it serves (modelplane.mockengine.config)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from modelplane import paths
from modelplane.mockengine import config as C
from modelplane.workloads import pods


@dataclass
class Case:
    name: str
    argv: list[str]
    want: tuple            # (engine, model, served_names, port, host, serves_http)
    image: str = ""
    env: dict[str, str] = field(default_factory=dict)
    args_only: bool = False


CASES = [
    Case("vllm serve with a positional model", ["vllm", "serve", "m", "--served-model-name", "x"],
         ("vllm", "m", ("x",), 8000, "", True)),
    Case("served names default to the model", ["vllm", "serve", "Qwen/Qwen3-8B"],
         ("vllm", "Qwen/Qwen3-8B", ("Qwen/Qwen3-8B",), 8000, "", True)),
    Case("several served names, --flag value form", ["vllm", "serve", "m", "--served-model-name", "a", "b",
                                                     "--port", "9000", "--host", "0.0.0.0"],
         ("vllm", "m", ("a", "b"), 9000, "0.0.0.0", True)),
    Case("--flag=value form and underscores", ["vllm", "serve", "--model=m", "--served_model_name=x", "--port=8001"],
         ("vllm", "m", ("x",), 8001, "", True)),
    Case("a positional after known flags", ["vllm", "serve", "--port", "8001", "--host=::", "m"],
         ("vllm", "m", ("m",), 8001, "::", True)),
    Case("a word after an unknown flag is its value", ["vllm", "serve", "--dtype", "half", "-tp", "2", "--model=m"],
         ("vllm", "m", ("m",), 8000, "", True)),
    Case("unknown flags with values are skipped", ["vllm", "serve", "m", "--tensor-parallel-size", "8",
                                                   "--enable-auto-tool-choice", "--served-model-name=x"],
         ("vllm", "m", ("x",), 8000, "", True)),
    Case("the OpenAI api_server module", ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"],
         ("vllm", "m", ("m",), 8000, "", True)),
    Case("args only with the vLLM image", ["--model=Qwen/Qwen3-8B", "--served-model-name=qwen"],
         ("vllm", "Qwen/Qwen3-8B", ("qwen",), 8000, "", True), image="vllm/vllm-openai:v0.23.0", args_only=True),
    Case("args only with the ROCm image", ["--model=m"], ("vllm", "m", ("m",), 8000, "", True),
         image="docker.io/vllm/vllm-openai-rocm:v0.23.0", args_only=True),
    Case("args only with the vLLM image, the model first", ["Qwen/Qwen3-8B", "--served-model-name=qwen"],
         ("vllm", "Qwen/Qwen3-8B", ("qwen",), 8000, "", True), image="vllm/vllm-openai:v0.23.0", args_only=True),
    Case("args only with a vLLM image before v0.14.0 (the api_server module)", ["--model=m", "--port=8001"],
         ("vllm", "m", ("m",), 8001, "", True), image="vllm/vllm-openai:v0.13.0", args_only=True),
    Case("args only with rocm/vllm", ["--model=m"], ("vllm", "m", ("m",), 8000, "", True),
         image="rocm/vllm:rocm7.0.0_vllm_0.11.2_20251210", args_only=True),
    Case("a headless vLLM worker serves no HTTP", ["vllm", "serve", "m", "--headless"],
         ("vllm", "m", ("m",), 8000, "", False)),
    Case("SGLang launch_server", ["python3", "-m", "sglang.launch_server", "--model-path", "M"],
         ("sglang", "M", ("M",), 30000, "127.0.0.1", True)),
    Case("SGLang with its flags", ["python3", "-m", "sglang.launch_server", "--model-path=/mnt/models",
                                   "--served-model-name=kimi", "--host=0.0.0.0", "--port=8000"],
         ("sglang", "/mnt/models", ("kimi",), 8000, "0.0.0.0", True)),
    Case("sglang serve", ["sglang", "serve", "--model-path", "M", "--port", "8000"],
         ("sglang", "M", ("M",), 8000, "127.0.0.1", True)),
    Case("an SGLang node of rank 1 serves no HTTP", ["python3", "-m", "sglang.launch_server", "--model-path=M",
                                                      "--node-rank=1"],
         ("sglang", "M", ("M",), 30000, "127.0.0.1", False)),
    Case("sh -c with exec", ["/bin/sh", "-c", ("exec vllm serve /mnt/models --served-model-name=qwen3-coder "
                                                "--port=8000")],
         ("vllm", "/mnt/models", ("qwen3-coder",), 8000, "", True)),
    Case("bash -c, multi-line, setup first", ["bash", "-ec", ("set -x\n# start the engine\nexport A=1 && cd /tmp; \\\n"
                                                             "  exec python3 -u -m sglang.launch_server \\\n"
                                                             "    --model-path 'M N' --port 8100  # comment")],
         ("sglang", "M N", ("M N",), 8100, "127.0.0.1", True)),
    Case("$(VAR) is expanded from the env", ["vllm", "serve", "$(MODEL)", "--port=$(PORT)", "--x=$$(KEEP)"],
         ("vllm", "/mnt/models", ("/mnt/models",), 8123, "", True), env={"MODEL": "/mnt/models", "PORT": "8123"}),
    Case("shell variables inside a script", ["sh", "-c", ("vllm serve ${MODEL} --served-model-name=$NAME "
                                                         "--port=${PORT:-8100} --x=$UNSET")],
         ("vllm", "/m", ("qwen",), 8100, "", True), env={"MODEL": "/m", "NAME": "qwen"}),
    Case("$(VAR) inside a script", ["sh", "-c", "vllm serve m --served-model-name=$(NAME)"],
         ("vllm", "m", ("qwen",), 8000, "", True), env={"NAME": "qwen"}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_from_argv(case):
    got = C.from_argv(case.argv, case.image, case.env, args_only=case.args_only)
    assert (got.engine, got.model, got.served_names, got.port, got.host, got.serves_http) == case.want


ERRORS = [
    ("an unknown program", ["trtllm-serve", "/mnt/models"], "", False, "runs no engine the mock understands"),
    ("args only, an unknown image", ["--model=m"], "example.com/other:1", False, "has no entrypoint the mock knows"),
    ("vllm with no model", ["vllm", "serve", "--port=8000"], "", False, "names no model"),
    ("vllm serve with the model twice", ["vllm", "serve", "a", "--model=b"], "", False, "names the model twice"),
    ("the api_server module with a positional model", ["python3", "-m", "vllm.entrypoints.openai.api_server", "m"],
     "", False, "ignores the positional model"),
    ("args only, the model first, before v0.14.0", ["m", "--port=8000"], "vllm/vllm-openai:v0.13.0", False,
     "ignores the positional model"),
    ("sglang with no model", ["python3", "-m", "sglang.launch_server"], "", False, "names no model"),
    ("a port that is not a number", ["vllm", "serve", "m", "--port=http"], "", False, "is not a number"),
    ("a script without an engine", ["sh", "-c", "sleep infinity"], "", False, "runs no engine"),
    ("an unclosed quote", ["sh", "-c", "vllm serve 'm"], "", False, "cannot read the shell script"),
]


@pytest.mark.parametrize("name,argv,image,_,want", ERRORS, ids=[e[0] for e in ERRORS])
def test_from_argv_refuses(name, argv, image, _, want):
    with pytest.raises(C.ConfigError, match=want) as err:
        C.from_argv(argv, image, args_only=bool(image), container="engine")
    assert "container 'engine'" in str(err.value)


def test_expand_follows_the_kubelet():
    env = {"A": "1", "B": "two"}
    assert C.expand("$(A)-$(B)-$(C)-$$(A)-$A-$(", env) == "1-two-$(C)-$(A)-$A-$("


def _pod(container: dict, **labels: str) -> dict:
    return {"metadata": {"name": "qwen-0", "namespace": "ml-team", "labels": labels},
            "spec": {"containers": [{"name": "sidecar", "image": "busybox"}, container]}}


def test_from_pod_reads_the_engine_container_and_its_env():
    pod = _pod({"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                "env": [{"name": "LEADER", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                        {"name": "NAME", "value": "qwen"}, {"name": "ALIAS", "value": "$(NAME)-chat"}],
                "args": ["--model=Qwen/Qwen3-8B", "--served-model-name=$(ALIAS)", "--x=$(LEADER)"],
                "ports": [{"containerPort": 8000}]})
    got = C.from_pod(pod)
    assert (got.engine, got.served_names, got.port, got.container, got.warnings) == \
        ("vllm", ("qwen-chat",), 8000, "engine", ())
    assert "--x=$(LEADER)" in got.argv, "a valueFrom variable is only known at run time: left as written"


def test_from_argv_warns_when_the_engine_listens_on_loopback_only():
    got = C.from_argv(["python3", "-m", "sglang.launch_server", "--model-path=M"], container="engine")
    assert got.warnings == (("container 'engine': the engine listens on 127.0.0.1 only (its --host): nothing "
                             "outside the pod reaches it"),)


def test_from_pod_warns_when_the_declared_port_differs():
    pod = _pod({"name": "engine", "command": ["vllm", "serve", "m"], "ports": [{"containerPort": 9000}]})
    got = C.from_pod(pod)
    assert got.port == 8000
    assert got.warnings == (("container 'engine' declares port(s) 9000 but the engine listens on 8000: "
                             "serving on 8000, as the engine would"),)


def test_from_pod_names_a_missing_container():
    with pytest.raises(C.ConfigError, match=r"pod 'qwen-0' has no container 'web' \(it has 'sidecar', 'engine'\)"):
        C.from_pod(_pod({"name": "engine", "command": ["vllm", "serve", "m"]}), "web")


def test_identity_from_pod_and_its_header():
    pod = _pod({"name": "engine"}, **{"modelplane.ai/deployment": "qwen", "modelplane.ai/replica": "1",
                                      "modelplane.ai/revision": "abc", "modelplane.ai/engine": "qwen3-8b"})
    who = C.identity_from_pod(pod, "prod-a")
    assert who.header() == "cluster=prod-a,namespace=ml-team,pod=qwen-0,deployment=qwen,replica=1,revision=abc"
    assert who.engine == "qwen3-8b"
    assert C.Identity(pod="p", replica="0").header() == "pod=p,replica=0", "unknown keys are left out"


# --- every engine container of the examples and the docs, composed as Modelplane composes it ---------

def _engine_templates(doc) -> list[dict]:
    """Each pod spec under ``doc`` holding a container named engine."""
    found = []
    if isinstance(doc, dict):
        if any(isinstance(c, dict) and c.get("name") == "engine" for c in doc.get("containers") or []):
            found.append(doc)
        for v in doc.values():
            found += _engine_templates(v)
    elif isinstance(doc, list):
        for v in doc:
            found += _engine_templates(v)
    return found


def _example_pods() -> list[tuple[str, dict]]:
    out = []
    files = sorted(paths.EXAMPLES.rglob("*.yaml")) + sorted((paths.ROOT / "docs" / "manifests").rglob("*.yaml"))
    for f in files:
        if f.name.endswith(".wrong.yaml"):
            continue   # wrong on purpose: validate rejects them, no pod is ever made
        for doc in yaml.safe_load_all(f.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") != "ModelDeployment":
                continue
            cache = "cache" if (doc.get("spec") or {}).get("modelCacheRef") else None
            for i, spec in enumerate(_engine_templates(doc.get("spec"))):
                composed = pods.pod_template({"spec": spec}, pods.PodOptions(labels={}, pool="p", cache_pvc=cache))
                out.append((f"{f.relative_to(paths.ROOT)}#{doc['metadata']['name']}[{i}]",
                            {"metadata": {"name": doc["metadata"]["name"]}, "spec": composed["spec"],
                             "_template": spec}))
    return out


EXAMPLES = _example_pods()


def _expected(template: dict) -> tuple[str | None, str | None]:
    """(engine, served name) read the simple way: the image names the engine, the text the name."""
    engine = pods.engine_container({"spec": template})
    image = engine.get("image", "")
    kind = "sglang" if "sglang" in image else "vllm" if "vllm" in image else None
    text = " ".join(map(str, (engine.get("command") or []) + (engine.get("args") or [])))
    named = re.search(r"--served-model-name[= ](\S+)", text)
    model = re.search(r"--model(?:-path)?[= ](\S+)", text) or re.search(r"vllm serve (\S+)", text)
    args = [str(a) for a in engine.get("args") or []]
    if model is None and not engine.get("command") and args and not args[0].startswith("-"):
        return kind, named.group(1) if named else args[0]     # only args, the model first
    return kind, named.group(1) if named else model.group(1) if model else "/mnt/models"


def test_the_examples_hold_engine_containers():
    assert len(EXAMPLES) > 40, "the glob found almost nothing: it is broken, not the examples few"


@pytest.mark.parametrize("where,pod", EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_every_example_engine_parses(where, pod):
    template = pod.pop("_template")
    kind, served = _expected(template)
    if kind is None:   # TensorRT-LLM (trtllm-serve): not an engine the mock imitates; it says so
        with pytest.raises(C.ConfigError, match="container 'engine' runs no engine the mock understands"):
            C.from_pod(pod)
        return
    got = C.from_pod(pod)
    assert (got.engine, got.served_names[0]) == (kind, served)
    if got.serves_http:   # the engine listens where Modelplane's Service and routes point
        assert got.port == pods.engine_port({"spec": template}), where
        assert got.warnings == ()


def test_the_multinode_worker_is_headless():
    workers = [C.from_pod(p) for w, p in _example_pods() if "model-deployment-multinode" in w]
    assert workers and [c.serves_http for c in workers] == [True, False] * (len(workers) // 2)


def test_a_pod_manifest_file_round_trips(tmp_path: Path):
    f = tmp_path / "pod.yaml"
    f.write_text(yaml.safe_dump(_pod({"name": "engine", "command": ["vllm", "serve", "m"]})))
    assert C.from_pod(yaml.safe_load(f.read_text())).served_names == ("m",)
