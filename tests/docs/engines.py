"""What a page's request blocks talk to in docs-test: mock engines of the pods Modelplane composes.

A page whose front matter names ``requests: {fleet, service}`` sends requests to a ModelService.
docs-test cannot reach a gateway, so it answers those blocks (``# needs: engine``) with
``modelplane.mockengine``, configured from each engine container the service's deployments
compose: the pod template of every composed Deployment, and of every LeaderWorkerSet's leader,
of replica 0, read by ``mockengine.from_pod`` exactly as the lab reads a running pod. The served
model names are therefore checked by the same parser that reads vLLM's and SGLang's flags. What
this does not judge: the gateway's two hops (the lab does, docs/ml/send-a-request.md) and the
engines themselves.

``kubectl get modelservice -n NS NAME -o jsonpath=...`` on such a page is evaluated here against
the simulated ModelService, so the output the page shows is the one simulate gives.
"""
from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from modelplane import labels as L
from modelplane.mockengine import ConfigError, EngineConfig, MockEngine, Options, from_pod, identity_from_pod

# The one form of the command a page may show: the test reads namespace, name and template from it.
KUBECTL = re.compile(r"kubectl get (?:modelservice|modelservices|ms)\b(?P<rest>[^\n)]*)")
_TEMPLATE = re.compile(r"\{(?P<expr>[^}]*)\}|(?P<text>[^{]+)")


@dataclass(frozen=True)
class EnginePod:
    """One engine container the service reaches: the workload it came from and what it serves."""

    workload: str            # the composed Deployment or LeaderWorkerSet
    pod: dict                # a pod built from its template (name, namespace, labels, spec)
    config: EngineConfig | None
    refused: str = ""        # why the mock engine cannot imitate it (a ConfigError), else ""


def _templates(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod templates of a workload that can serve HTTP: a Deployment's, a LeaderWorkerSet's leader."""
    spec = manifest.get("spec") or {}
    if manifest.get("kind") == "Deployment":
        return [spec.get("template") or {}]
    if manifest.get("kind") == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        return [lwt.get("leaderTemplate") or lwt.get("workerTemplate") or {}]
    return []


def selected_deployments(service: Mapping[str, Any]) -> set[str]:
    """The deployments a ModelService's endpoint groups name (``modelplane.ai/deployment``)."""
    out = set()
    for group in (service.get("spec") or {}).get("endpoints") or []:
        name = ((group.get("selector") or {}).get("matchLabels") or {}).get(L.DEPLOYMENT)
        if name:
            out.add(name)
    return out


def engine_pods(world: Any, service: Mapping[str, Any]) -> list[EnginePod]:
    """Every engine container of replica 0 of the deployments ``service`` selects, sorted by workload."""
    wanted = selected_deployments(service)
    namespace = (service.get("metadata") or {}).get("namespace", "")
    out = []
    for state in world.xrs.values():
        for obj in state.composed.values():
            manifest = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}
            meta = manifest.get("metadata") or {}
            if meta.get("namespace") != namespace:
                continue
            for template in _templates(manifest):
                labels = (template.get("metadata") or {}).get("labels") or {}
                if labels.get(L.DEPLOYMENT) not in wanted or str(labels.get(L.REPLICA)) != "0":
                    continue
                pod = {"metadata": {"name": f"{meta.get('name')}-0", "namespace": namespace, "labels": labels},
                       "spec": template.get("spec") or {}}
                try:
                    out.append(EnginePod(str(meta.get("name")), pod, from_pod(pod)))
                except ConfigError as err:
                    out.append(EnginePod(str(meta.get("name")), pod, None, str(err)))
    return sorted(out, key=lambda e: e.workload)


@contextmanager
def serving(pods: list[EnginePod], cluster: str = "docs") -> Iterator[list[tuple[EnginePod, MockEngine]]]:
    """A mock engine on 127.0.0.1 (a free port) for each pod whose engine serves HTTP."""
    with ExitStack() as stack:
        engines = []
        for p in pods:
            if p.config is not None and p.config.serves_http:
                engine = MockEngine(p.config, identity_from_pod(p.pod, cluster), "127.0.0.1", 0, Options()).start()
                stack.callback(engine.close)
                engines.append((p, engine))
        yield engines


@dataclass(frozen=True)
class KubectlGet:
    namespace: str
    name: str
    template: str


def kubectl_gets(body: str) -> list[KubectlGet]:
    """Each ``kubectl get modelservice -n NS NAME -o jsonpath='...'`` of a block, in order; a form
    this cannot read is an AssertionError saying which form to write."""
    out = []
    for m in KUBECTL.finditer(body):
        words = shlex.split(m.group("rest"))
        ns = words[words.index("-n") + 1] if "-n" in words else ""
        names = [w for i, w in enumerate(words) if not w.startswith("-") and (i == 0 or words[i - 1] not in ("-n", "-o"))]
        template = next((w.partition("=")[2] for w in words if w.startswith("jsonpath=")), None)
        if template is None and "-o" in words:
            value = words[words.index("-o") + 1]
            template = value.partition("=")[2] if value.startswith("jsonpath=") else None
        assert ns and len(names) == 1 and template, (
            f"write it as kubectl get modelservice -n NAMESPACE NAME -o jsonpath='...': {m.group(0)!r}")
        out.append(KubectlGet(ns, names[0], template))
    return out


def jsonpath(template: str, obj: Mapping[str, Any]) -> str:
    """What ``kubectl -o jsonpath=TEMPLATE`` prints for ``obj``: ``{.a.b}`` fields and ``{"..."}``
    literals (``\\n`` a newline) between plain text; anything else is refused, not guessed."""
    out = []
    for m in _TEMPLATE.finditer(template):
        if m.group("text") is not None:
            out.append(m.group("text"))
            continue
        expr = m.group("expr").strip()
        if expr.startswith('"'):
            out.append(json.loads(expr))
            continue
        assert re.fullmatch(r"(\.[A-Za-z0-9_]+)+", expr), f"jsonpath {{{expr}}} is not a plain field path"
        value: Any = obj
        for part in expr.strip(".").split("."):
            assert isinstance(value, Mapping) and part in value, f"jsonpath {{{expr}}}: no field {part!r}"
            value = value[part]
        out.append(value if isinstance(value, str) else json.dumps(value))
    return "".join(out)
