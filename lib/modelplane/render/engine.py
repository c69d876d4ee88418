"""The render pipeline: one XR through its Composition's functions, as classic render does.

1. Observed state is the XR plus the observed composed resources (keyed by
   their composition-resource-name annotation); desired starts empty and the
   context starts from the seeds.
2. Each step gets its input, credentials (Secret ``data``), bootstrap
   requirements (resources answered from ``-e`` objects only, schemas from
   ``-s`` documents) and capabilities [1..5],
   then runs the requirements loop: call; a FATAL result returns at once;
   identical requirements to the previous call (none at first) stop it;
   otherwise required/extra resources and schemas are rebuilt from scratch,
   the returned context is carried, and the call repeats, at most six times.
3. Desired state and context pass to the next step; conditions and non-fatal
   results accumulate; the first FATAL fails the render.
4. ``finish`` turns the final desired state into the output objects.

The whole run shares one deadline. ``render`` is the API ``modelplane
simulate`` reuses with a long-lived ``FunctionPool``.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from modelplane.pipeline import structs, structwire
from modelplane.pipeline.structwire import struct_bytes
from modelplane.render import finish, yaml11
from modelplane.render.errors import RenderError
from modelplane.render.fetch import Fetcher, as_struct, selector_from_manifest
from modelplane.render.runners import FunctionPool
from modelplane.render.schemas import SchemaFetcher
from modelplane.render.wire import EXTRA_RESOURCES, REQUIRED_RESOURCES, WireRequest, map_entry_parts
from modelplane.render.wire import field as wire_field

MAX_REQUIREMENTS_ITERATIONS = 5
OBSERVED = fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_name["observed"].number
CAPABILITIES = (
    fnv1.CAPABILITY_CAPABILITIES,
    fnv1.CAPABILITY_REQUIRED_RESOURCES,
    fnv1.CAPABILITY_CREDENTIALS,
    fnv1.CAPABILITY_CONDITIONS,
    fnv1.CAPABILITY_REQUIRED_SCHEMAS,
)
_STATUS = {
    fnv1.STATUS_CONDITION_TRUE: "True",
    fnv1.STATUS_CONDITION_FALSE: "False",
}
_READY = {fnv1.READY_UNSPECIFIED: "UNSPECIFIED", fnv1.READY_TRUE: "TRUE", fnv1.READY_FALSE: "FALSE"}


@dataclass
class RenderInputs:
    """Everything one render needs, as plain data (see ``loader`` for files)."""

    xr: dict
    composition: dict
    functions: list[dict]
    observed: list[dict] = field(default_factory=list)
    extra_resources: list[dict] = field(default_factory=list)
    required_resources: list[dict] = field(default_factory=list)
    credentials: list[dict] = field(default_factory=list)  # Secrets, ``data`` values as bytes
    schemas: list[dict] = field(default_factory=list)  # OpenAPI v3 documents (``-s``)
    context: dict[str, Any] = field(default_factory=dict)
    timeout: float = 60.0
    strict_namespace: bool = False
    # When set, answers every resource selector instead of the lists above
    # (``modelplane simulate`` answers from its own indexed, cached store), as a message or as
    # the message's wire bytes (then the request carries them as they are: ``render.wire``).
    fetch: Callable[[fnv1.ResourceSelector], fnv1.Resources | bytes] | None = None
    # When set, converts objects to and from protobuf Structs (``encode``/``decode``), e.g. with a cache.
    codec: Codec | None = None


class Codec:
    """Objects to protobuf Structs and back: ``as_struct`` and ``_data`` unless a caller brings its own."""

    def encode(self, obj: dict) -> struct_pb2.Struct:
        return as_struct(obj)

    def encode_wire(self, obj: dict) -> bytes:
        """``encode(obj).SerializeToString()``, byte for byte (``structwire``), without the Struct."""
        return struct_bytes(obj)

    def decode(self, struct: struct_pb2.Struct) -> dict:
        return _data(struct)


@dataclass
class RenderOutput:
    """The rendered XR, composed resources (sorted), Result objects and Context object."""

    xr: dict
    composed: list[dict]
    results: list[dict]
    context: dict
    ttl: float | None = None  # the shortest response TTL of the pipeline's steps, in seconds


def _data(struct: struct_pb2.Struct) -> dict:
    """``jsonify(struct_to_dict(struct))``, in one pass (``modelplane.pipeline.structs``)."""
    return structs.to_plain(struct, yaml11.INT64_MIN, yaml11.INT64_MAX + 1)


def _name(obj: dict) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


class _Answer:
    """A caller's selector answering function in the place of a ``Fetcher``."""

    def __init__(self, fetch: Callable[[fnv1.ResourceSelector], fnv1.Resources | bytes]) -> None:
        self.fetch = fetch


@dataclass
class Bootstrap:
    """A step's ``requirements`` block, answered before its first call."""

    resources: dict[str, fnv1.Resources] = field(default_factory=dict)
    schemas: dict[str, fnv1.Schema] = field(default_factory=dict)

    def apply(self, req: fnv1.RunFunctionRequest) -> None:
        for key, resources in self.resources.items():
            req.required_resources[key].CopyFrom(resources)
        for key, schema in self.schemas.items():
            req.required_schemas[key].CopyFrom(schema)


class _Run:
    """State of one render."""

    def __init__(self, inputs: RenderInputs, pool: FunctionPool):
        self.inputs = inputs
        self.pool = pool
        self.deadline = time.monotonic() + inputs.timeout
        xr_ns = str((inputs.xr.get("metadata") or {}).get("namespace", ""))
        strict = inputs.strict_namespace
        self.fetch_all = Fetcher(
            [*inputs.extra_resources, *inputs.required_resources], strict_namespace=strict, xr_namespace=xr_ns
        )
        self.fetch_required = Fetcher(inputs.required_resources, strict_namespace=strict, xr_namespace=xr_ns)
        if inputs.fetch is not None:
            self.fetch_all = self.fetch_required = _Answer(inputs.fetch)  # type: ignore[assignment]
        self.codec = inputs.codec or Codec()
        self.fetch_schemas = SchemaFetcher(inputs.schemas)
        self.names = {_name(fn) for fn in inputs.functions}
        self.observed_by_name: dict[str, dict] = {}
        for obj in inputs.observed:
            key = ((obj.get("metadata") or {}).get("annotations") or {}).get(finish.ANNOTATION_RESOURCE_NAME, "")
            self.observed_by_name[key] = obj

    def observed_state(self) -> fnv1.State:
        return fnv1.State.FromString(self.observed_wire())

    def observed_wire(self) -> bytes:
        """The observed State's wire bytes, as a State built resource by resource serialises.

        Every step's request carries it as it is (``WireRequest``): encoded once per render, and
        from bytes the codec may keep, instead of Structs copied into each request."""
        parts = [wire_field(1, wire_field(1, self.codec.encode_wire(self.inputs.xr)))]
        for key in structwire.order(tuple(self.observed_by_name)):
            parts.extend(map_entry_parts(2, key, wire_field(1, self.codec.encode_wire(self.observed_by_name[key]))))
        return b"".join(parts)

    def credentials(self, step: dict, req: fnv1.RunFunctionRequest) -> None:
        for cred in step.get("credentials") or []:
            ref = cred.get("secretRef")
            if cred.get("source") != "Secret" or not ref:
                continue
            secret = next(
                (
                    s
                    for s in self.inputs.credentials
                    if _name(s) == ref.get("name", "")
                    and (s.get("metadata") or {}).get("namespace", "") == ref.get("namespace", "")
                ),
                None,
            )
            if secret is None:
                raise RenderError(
                    f'cannot get credentials from secret "{ref.get("name", "")}": secret "{ref.get("name", "")}" not found'
                )
            data = req.credentials[cred.get("name", "")].credential_data.data
            for key, value in (secret.get("data") or {}).items():
                data[key] = value

    def schema(self, key: str, sel: fnv1.SchemaSelector) -> fnv1.Schema:
        try:
            return self.fetch_schemas.fetch(sel)
        except RenderError as err:
            raise err.wrap(f'cannot fetch required schema for requirement "{key}"') from None

    def bootstrap(self, step: dict) -> Bootstrap:
        """The step's declared requirements, fetched once; every call of the loop carries them."""
        out = Bootstrap()
        reqs = step.get("requirements")
        if reqs is None:
            return out
        for entry in reqs.get("requiredResources") or []:
            out.resources[entry.get("requirementName", "")] = self.fetch_required.fetch(selector_from_manifest(entry))
        for entry in reqs.get("requiredSchemas") or []:
            key = entry.get("requirementName", "")
            sel = fnv1.SchemaSelector(api_version=entry.get("apiVersion", ""), kind=entry.get("kind", ""))
            out.schemas[key] = self.schema(key, sel)
        return out

    def call(self, ref: str, req: fnv1.RunFunctionRequest, bootstrap: Bootstrap) -> fnv1.RunFunctionResponse:
        """The requirements loop (xfn.FetchingFunctionRunner)."""
        if ref not in self.names:
            raise RenderError(f'unknown Function "{ref}" - does it exist in your Functions file?')
        bootstrap.apply(req)
        prev: fnv1.Requirements | None = None
        entries: list[bytes] = []   # answers already in wire form (map entries of the request)
        for _ in range(MAX_REQUIREMENTS_ITERATIONS + 1):
            rsp = self.pool.run(ref, WireRequest(req, [self.observed, *entries]), self.deadline)
            if any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results):
                return rsp
            cur = rsp.requirements if rsp.HasField("requirements") else None
            if cur == prev:
                return rsp
            prev = fnv1.Requirements()
            prev.CopyFrom(cur)
            for name in ("required_resources", "extra_resources", "required_schemas"):
                req.ClearField(name)
            entries = []
            bootstrap.apply(req)
            for number, target, wanted in ((REQUIRED_RESOURCES, req.required_resources, cur.resources),
                                          (EXTRA_RESOURCES, req.extra_resources, cur.extra_resources)):
                for key in sorted(wanted):
                    got = self.fetch_all.fetch(wanted[key])
                    if isinstance(got, bytes):
                        entries.extend(map_entry_parts(number, key, got))
                    else:
                        target[key].CopyFrom(got)
            for key in sorted(cur.schemas):
                # An unknown kind still sets the key: "looked up, none found".
                req.required_schemas[key].CopyFrom(self.schema(key, cur.schemas[key]))
            if rsp.HasField("context"):
                req.context.CopyFrom(rsp.context)
            else:
                req.ClearField("context")
        raise RenderError(
            f"requirements didn't stabilize after the maximum number of iterations ({MAX_REQUIREMENTS_ITERATIONS})"
        )

    def _pipeline(self) -> list[dict]:
        return (self.inputs.composition.get("spec") or {}).get("pipeline") or []

    def run(self) -> RenderOutput:
        # Start only what the pipeline calls: a functions file usually lists
        # every function of a package, and each local one costs a process.
        used = {str((step.get("functionRef") or {}).get("name", "")) for step in self._pipeline()}
        needed = [fn for fn in self.inputs.functions if (fn.get("metadata") or {}).get("name") in used]
        try:
            self.pool.start(needed, self.deadline)
        except RenderError as err:
            raise err.wrap("cannot render composite resource") from None
        # RunFunctionRequest.observed: the same bytes in every step's request.
        self.observed = wire_field(OBSERVED, self.observed_wire())
        desired = fnv1.State()
        context: struct_pb2.Struct | None = struct_pb2.Struct()
        context.update(self.inputs.context)
        results: list[dict] = []
        conditions: list[dict] = []
        ttl: float | None = None

        for step in self._pipeline():
            step_name = step.get("step", "")
            req = fnv1.RunFunctionRequest(desired=desired)
            if context is not None:
                req.context.CopyFrom(context)
            try:
                if step.get("input") is not None:
                    req.input.update(step["input"])
                self.credentials(step, req)
                bootstrap = self.bootstrap(step)
                req.meta.capabilities.extend(CAPABILITIES)
                try:
                    rsp = self.call((step.get("functionRef") or {}).get("name", ""), req, bootstrap)
                except RenderError as err:
                    raise err.wrap(f'cannot run pipeline step "{step_name}"') from None
            except RenderError as err:
                raise err.wrap("cannot render composite resource") from None

            if rsp.meta.HasField("ttl"):
                step_ttl = rsp.meta.ttl.ToTimedelta().total_seconds()
                ttl = step_ttl if ttl is None else min(ttl, step_ttl)
            desired = fnv1.State()
            desired.CopyFrom(rsp.desired)
            context = rsp.context if rsp.HasField("context") else None
            for c in rsp.conditions:
                conditions.append(
                    finish.function_condition(c.type, _STATUS.get(c.status, "Unknown"), c.reason, c.message)
                )
            for r in rsp.results:
                if r.severity == fnv1.SEVERITY_FATAL:
                    raise RenderError(
                        f'cannot render composite resource: pipeline step "{step_name}" returned a fatal result: {r.message}'
                    )
                results.append(
                    {
                        "apiVersion": "render.crossplane.io/v1beta1",
                        "kind": "Result",
                        "step": step_name,
                        "severity": fnv1.Severity.Name(r.severity),
                        "message": r.message,
                    }
                )

        try:
            composed, unready = [], []
            for key in sorted(desired.resources):
                dr = desired.resources[key]
                if dr.ready != fnv1.READY_TRUE:
                    unready.append(key)
                obj = self.codec.decode(dr.resource)
                composed.append(finish.composed_metadata(obj, self.inputs.xr, key, self.observed_by_name.get(key)))
            xr = finish.composite(
                self.codec.decode(desired.composite.resource),
                self.inputs.xr,
                _READY.get(desired.composite.ready, "UNSPECIFIED"),
                unready,
                conditions,
            )
        except RenderError as err:
            raise err.wrap("cannot render composite resource") from None
        ctx_doc = {
            "apiVersion": "render.crossplane.io/v1beta1",
            "kind": "Context",
            "fields": _data(context) if context is not None else {},
        }
        return RenderOutput(xr=xr, composed=composed, results=results, context=ctx_doc, ttl=ttl)


def render(inputs: RenderInputs, pool: FunctionPool) -> RenderOutput:
    """Render one XR through its Composition with functions from ``pool``.

    Raises ``RenderError`` with the message classic render prints.
    """
    return _Run(inputs, pool).run()


def documents(
    out: RenderOutput, xr: dict, *, full_xr: bool = False, results: bool = False, context: bool = False
) -> list[dict]:
    """The YAML documents render prints, in order."""
    docs = [finish.full_xr(out.xr, xr) if full_xr else out.xr, *out.composed]
    if results:
        docs.extend(out.results)
    if context:
        docs.append(out.context)
    return docs
