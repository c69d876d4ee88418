"""Hypothesis strategies for hostile input: XRs shaped by our XRDs, and worse.

Three families, all built from ``apis/<plural>/definition.yaml`` so they
follow the API as it changes:

- ``shaped(fn)``: an XR whose spec follows the XRD schema (types, enums,
  required keys) with random values - what admission might let through.
- ``hostile(fn)``: a shaped XR with one random spot replaced by something
  nasty (wrong type, null, a 100k string, a 10k-element list, deep nesting,
  unicode), or a spec that is plain random JSON.
- ``observed_children()`` / ``required_items(kind)``: random composed
  resources and required inputs, well-formed as the API server returns them.

Metadata stays realistic (the API server guarantees it); the spec is where a
function must defend itself.
"""
from __future__ import annotations

import functools
import string
from typing import Any

import yaml
from hypothesis import strategies as st
from modelplane import paths

# function -> the plural of the XR kind it composes.
PLURALS = {
    "compose-inference-class": "inferenceclasses",
    "compose-inference-cluster": "inferenceclusters",
    "compose-inference-gateway": "inferencegateways",
    "compose-model-deployment": "modeldeployments",
    "compose-model-replica": "modelreplicas",
    "compose-model-endpoint": "modelendpoints",
    "compose-model-service": "modelservices",
    "compose-model-cache": "modelcaches",
}

GROUP_VERSION = "modelplane.ai/v1alpha1"
MAX_DEPTH = 12  # schema recursion bound (the pod template is the deepest part)


@functools.cache
def xrd(plural: str) -> dict:
    with open(paths.APIS / plural / "definition.yaml") as f:
        return yaml.safe_load(f)


def kind_of(plural: str) -> str:
    return xrd(plural)["spec"]["names"]["kind"]


def namespaced(plural: str) -> bool:
    return xrd(plural)["spec"].get("scope", "Namespaced") == "Namespaced"


def schema(plural: str) -> dict:
    return xrd(plural)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


@functools.cache
def kind_plural(kind: str) -> str | None:
    """Our plural for ``kind`` (None when it is not one of ours)."""
    for plural in PLURALS.values():
        if kind_of(plural) == kind:
            return plural
    return None


# ----- leaves --------------------------------------------------------------
_ALNUM = string.ascii_lowercase + string.digits


def _label(first: str, middle: tuple[int, int]) -> st.SearchStrategy:
    """``[first][a-z0-9-]{middle}[a-z0-9]``, drawn as three choices: ``from_regex`` for the same
    language costs about a third of a whole case's generation time."""
    lo, hi = middle
    return st.builds(lambda a, b, c: a + b + c, st.sampled_from(first),
                     st.text(alphabet=_ALNUM + "-", min_size=lo, max_size=hi), st.sampled_from(_ALNUM))


DNS = st.one_of(st.sampled_from(_ALNUM), _label(_ALNUM, (0, 20)))          # [a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?
LONG_DNS = _label(string.ascii_lowercase, (40, 61))                       # [a-z][a-z0-9-]{40,61}[a-z0-9]
NAMES = st.one_of(DNS, LONG_DNS)
WORDS = st.sampled_from(["", "a", "gpu", "l4", "Ready", "True", "0", "-1", "1e9", "null", "\x00", "é", "🙂",
                         "modelplane.ai/x", "../../etc", "a" * 64, "http://x", "${jndi:x}"])
TEXT = st.one_of(WORDS, st.text(max_size=40), DNS)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(allow_nan=False,
                   allow_infinity=False), TEXT)
JSON = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                    st.dictionaries(TEXT, inner, max_size=4)), max_leaves=20)


def _string(node: dict) -> st.SearchStrategy:
    if "enum" in node:
        return st.sampled_from(node["enum"])
    if node.get("format") == "int-or-string" or node.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, 10**6), TEXT)
    return st.one_of(DNS, TEXT, st.sampled_from(["1", "24Gi", "1.2.3", "100m", "true"]))


def _integer(node: dict) -> st.SearchStrategy:
    lo = node.get("minimum", -(10**6))
    hi = node.get("maximum", 10**6)
    return st.one_of(st.integers(lo, max(lo, min(hi, lo + 8))), st.integers(lo, hi))


def from_schema(node: dict, depth: int = 0, limit: int = MAX_DEPTH) -> st.SearchStrategy:
    """Values shaped like the OpenAPI ``node`` (types, enums, required keys), down to ``limit`` levels."""
    if "enum" in node:
        return st.sampled_from(node["enum"])
    typ = node.get("type")
    if node.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, 10**6), TEXT)
    if typ == "string":
        return _string(node)
    if typ == "integer":
        return _integer(node)
    if typ == "number":
        return st.floats(node.get("minimum", -1e6), node.get("maximum", 1e6), allow_nan=False)
    if typ == "boolean":
        return st.booleans()
    if typ == "array":
        items = node.get("items") or {}
        cap = min(node.get("maxItems", 3), 3)
        return st.lists(from_schema(items, depth + 1, limit) if depth < limit else JSON,
                        min_size=min(node.get("minItems", 0), cap), max_size=cap)
    if typ == "object" or "properties" in node:
        props = node.get("properties") or {}
        if depth >= limit:
            return st.just({})
        if not props:
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return st.dictionaries(DNS, from_schema(extra, depth + 1, limit), max_size=3)
            return st.dictionaries(DNS, JSON, max_size=3)
        req = set(node.get("required") or [])
        return st.fixed_dictionaries(
            {k: from_schema(v, depth + 1, limit) for k, v in props.items() if k in req},
            optional={k: from_schema(v, depth + 1, limit) for k, v in props.items() if k not in req},
        )
    return JSON


def metadata(plural: str, namespace: st.SearchStrategy | None = None) -> st.SearchStrategy:
    fields = {"name": NAMES}
    if namespaced(plural):
        fields["namespace"] = namespace or NAMES
    return st.fixed_dictionaries(
        fields, optional={"labels": st.dictionaries(DNS, DNS, max_size=3), "uid": st.uuids().map(str),
                          "generation": st.integers(1, 100)})


def shaped(function: str) -> st.SearchStrategy:
    """An XR of ``function``'s kind whose spec (and status) follow the schema."""
    return shaped_of(PLURALS[function])


# ----- hostile values --------------------------------------------------------
def _deep(levels: int) -> Any:
    out: Any = "bottom"
    for i in range(levels):
        out = {"a": out} if i % 2 else [out]
    return out


EXTREME = st.one_of(
    st.just("x" * 100_000),
    st.just("é🙂\u202e\x00" * 2_000),
    st.just(list(range(10_000))),
    st.just([{"name": f"n{i}"} for i in range(10_000)]),
    st.just({f"k{i}": i for i in range(10_000)}),
    st.integers(min_value=2**53, max_value=2**63).map(float),
    st.just(-1), st.just(0), st.just(1e308), st.just(-1e308),
    st.sampled_from([_deep(20), _deep(60)]),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=200),
    JSON,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indexes) inside ``value``, the root excluded."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,)))
    return out


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


@st.composite
def mutated(draw, function: str) -> dict:
    """A shaped XR with one spot in spec/status replaced by an extreme value."""
    xr = draw(shaped(function))
    spots = [p for p in _paths({k: xr[k] for k in ("spec", "status") if k in xr})]
    if not spots:
        return {**xr, "spec": draw(EXTREME)}
    path = draw(st.sampled_from(spots))
    body = _replace({k: xr[k] for k in ("spec", "status") if k in xr}, path, draw(EXTREME))
    return {**xr, **body}


@functools.cache
def hostile(function: str) -> st.SearchStrategy:
    """Mutated shaped XRs, or an XR whose spec is random JSON."""
    plural = PLURALS[function]
    junk = st.fixed_dictionaries({"apiVersion": st.just(GROUP_VERSION), "kind": st.just(kind_of(plural)),
                                  "metadata": metadata(plural), "spec": JSON})
    return st.one_of(mutated(function), junk)


# ----- observed children and required inputs -------------------------------
KINDS = st.sampled_from([
    ("kubernetes.m.crossplane.io/v1alpha1", "Object"), ("helm.m.crossplane.io/v1beta1", "Release"),
    ("modelplane.ai/v1alpha1", "ModelReplica"), ("modelplane.ai/v1alpha1", "ModelEndpoint"),
    ("v1", "ConfigMap"), ("gateway.networking.k8s.io/v1", "HTTPRoute"),
])
CONDITION = st.fixed_dictionaries({
    "type": st.sampled_from(["Ready", "Synced", "Hydrated", "Scheduled"]),
    "status": st.sampled_from(["True", "False", "Unknown"]),
    "reason": st.sampled_from(["Available", "Creating", "ReconcileError", ""]),
}, optional={"message": TEXT, "lastTransitionTime": st.just("2026-01-01T00:00:00Z")})


# Observed children are what this function composed earlier, read back for their status: a spec
# shaped a few levels deep is enough, and the pod template's full depth triples a case's cost.
CHILD_DEPTH = 4


@functools.cache
def _spec(plural: str, limit: int = MAX_DEPTH) -> st.SearchStrategy:
    return from_schema(schema(plural)["properties"]["spec"], limit=limit)


@st.composite
def observed_child(draw) -> dict:
    api_version, kind = draw(KINDS)
    plural = kind_plural(kind) if api_version == GROUP_VERSION else None
    spec = draw(_spec(plural, CHILD_DEPTH)) if plural else draw(st.dictionaries(TEXT, JSON, max_size=4))
    status = {"conditions": draw(st.lists(CONDITION, max_size=3))}
    status.update(draw(st.dictionaries(DNS, JSON, max_size=2)))
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": draw(NAMES), "namespace": draw(NAMES), "labels": draw(st.dictionaries(DNS, DNS,
                                                                                                     max_size=2))},
            "spec": spec, "status": status}


@functools.cache
def observed_children() -> st.SearchStrategy:
    return st.dictionaries(st.text(alphabet=string.ascii_lowercase + "-", min_size=1, max_size=30),
                           observed_child(), max_size=4)


@functools.cache
def required_items(kind: str) -> st.SearchStrategy:
    """Items a requirement for ``kind`` might return: schema-shaped for our kinds."""
    plural = kind_plural(kind)
    if plural is None:
        return st.lists(st.fixed_dictionaries({
            "apiVersion": st.just("v1"), "kind": st.just(kind),
            "metadata": st.fixed_dictionaries({"name": NAMES, "namespace": NAMES}),
            "data": st.dictionaries(DNS, TEXT, max_size=2)}), max_size=3)
    return st.lists(shaped_of(plural), max_size=3)


@functools.cache
def shaped_of(plural: str) -> st.SearchStrategy:
    """An XR of ``plural`` shaped by its schema (built once: a strategy's construction costs more
    than most draws from it)."""
    props = schema(plural)["properties"]
    return st.fixed_dictionaries(
        {"apiVersion": st.just(GROUP_VERSION), "kind": st.just(kind_of(plural)), "metadata": metadata(plural),
         "spec": _spec(plural)},
        optional={"status": from_schema(props["status"])} if "status" in props else {},
    )
