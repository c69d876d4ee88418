"""Load render's inputs from files, with the checks and errors of the real CLI.

Every loader returns plain JSON-like data (dicts) read by go-yaml's rules
(see ``reader``). Files that hold a stream may also be directories: their
``.yaml``/``.yml`` files are read in name order, without recursion.
Messages read like classic ``crossplane render``'s, e.g.
``cannot load Composition from "c.yaml": not a composition: XR/foo``.
"""
from __future__ import annotations

import base64
import binascii
import errno
import os
from typing import Any

import yaml

from modelplane.render import reader
from modelplane.render.errors import RenderError

COMPOSITION_API = "apiextensions.crossplane.io/v1"
FUNCTION_APIS = ("pkg.crossplane.io/v1", "pkg.crossplane.io/v1beta1")


def _read(path: str) -> str:
    """The file's text: UTF-8, or UTF-16 or UTF-32 with a byte-order mark (``reader.decode``).

    Bytes that are not UTF-8 raise UnicodeDecodeError: the command names the file and the first
    bad byte's line and column (``modelplane.cli.render``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        reason = os.strerror(err.errno) if err.errno else str(err)
        if err.errno == errno.EISDIR:
            reason = "is a directory"
        raise RenderError(f"open {path}: {reason.lower()}") from None
    if reader.bom_encoding(data) in (None, "utf-8"):
        return data.decode("utf-8")  # a UTF-8 mark stays: the YAML scanner skips it
    try:
        return reader.decode(data)
    except yaml.YAMLError as err:
        raise RenderError(f'"{path}": {err}') from None


def _parse(text: str, what: str) -> list[Any]:
    try:
        return reader.load_all(text)
    except Exception as err:  # noqa: BLE001 - any YAML error is the user's input
        raise RenderError(f"{what}: {' '.join(str(err).split())}") from None


def _name(obj: Any) -> str:
    return str(((obj or {}).get("metadata") or {}).get("name", "")) if isinstance(obj, dict) else ""


def _kind(obj: Any) -> str:
    return str(obj.get("kind", "")) if isinstance(obj, dict) else ""


def _single(path: str, read_what: str, parse_what: str) -> dict:
    try:
        text = _read(path)
    except RenderError as err:
        raise err.wrap(read_what) from None
    docs = _parse(text, parse_what)
    doc = docs[0] if docs else {}
    if not isinstance(doc, dict):
        raise RenderError(f"{parse_what}: cannot unmarshal {type(doc).__name__} into an object")
    return doc


def load_xr(path: str) -> dict:
    try:
        return _single(path, "cannot read composite resource file", "cannot unmarshal composite resource YAML")
    except RenderError as err:
        raise err.wrap(f'cannot load composite resource from "{path}"') from None


def load_composition(path: str) -> dict:
    where = f'cannot load Composition from "{path}"'
    try:
        comp = _single(path, "cannot read composition file", "cannot unmarshal composition resource YAML")
    except RenderError as err:
        raise err.wrap(where) from None
    if comp.get("apiVersion") != COMPOSITION_API or _kind(comp) != "Composition":
        raise RenderError(f"{where}: not a composition: {_kind(comp)}/{_name(comp)}")
    return comp


def composition_selector(xr: dict) -> dict:
    """matchLabels of the XR's composition selector (v2 place first, then legacy)."""
    spec = xr.get("spec") or {}
    selector = (spec.get("crossplane") or {}).get("compositionSelector") or spec.get("compositionSelector") or {}
    return selector.get("matchLabels") or {}


def check_composition(xr: dict, comp: dict) -> None:
    """The checks render makes before running anything."""
    ref = (comp.get("spec") or {}).get("compositeTypeRef") or {}
    if ref.get("kind", "") != xr.get("kind", ""):
        raise RenderError(
            f"composition's compositeTypeRef.kind ({ref.get('kind', '')}) does not match XR's kind ({xr.get('kind', '')})"
        )
    if ref.get("apiVersion", "") != xr.get("apiVersion", ""):
        raise RenderError(
            f"composition's compositeTypeRef.apiVersion ({ref.get('apiVersion', '')}) "
            f"does not match XR's apiVersion ({xr.get('apiVersion', '')})"
        )
    labels = (comp.get("metadata") or {}).get("labels") or {}
    for key, want in sorted(composition_selector(xr).items()):
        if key not in labels:
            raise RenderError(f'composition "{_name(comp)}" is missing required label "{key}"')
        if labels[key] != want:
            raise RenderError(
                f'composition "{_name(comp)}" has incorrect value for label "{key}": '
                f'want "{want}", got "{labels[key]}"'
            )
    if (comp.get("spec") or {}).get("mode") != "Pipeline":
        raise RenderError(
            "render only supports Composition Function pipelines: "
            f'Composition "{_name(comp)}" must use spec.mode: Pipeline'
        )


def _stream_files(path: str) -> list[str]:
    if not os.path.exists(path):
        raise RenderError(f"cannot open file: open {path}: no such file or directory")
    if not os.path.isdir(path):
        return [path]
    files = sorted(
        os.path.join(path, n)
        for n in os.listdir(path)
        if os.path.splitext(n)[1] in (".yaml", ".yml") and not os.path.isdir(os.path.join(path, n))
    )
    if not files:
        raise RenderError(f'no YAML files found in "{path}" (.yaml or .yml)')
    return files


def load_stream(path: str) -> list[dict]:
    """Every object in a file, or in a directory's YAML files (name order)."""
    out: list[dict] = []
    for f in _stream_files(path):
        for doc in _parse(_read(f), "cannot parse YAML stream"):
            if not isinstance(doc, dict):
                raise RenderError("cannot parse YAML resource manifest: not an object")
            out.append(doc)
    return out


def _load_stream(path: str, what: str) -> list[dict]:
    try:
        return load_stream(path)
    except RenderError as err:
        raise err.wrap("cannot load YAML stream from file").wrap(f'cannot load {what} from "{path}"') from None


def load_functions(path: str, annotations: dict[str, str] | None = None) -> list[dict]:
    """Function manifests; ``annotations`` (``-a``) override theirs on every one."""
    fns = _load_stream(path, "functions")
    for fn in fns:
        if fn.get("apiVersion") not in FUNCTION_APIS or _kind(fn) != "Function":
            raise RenderError(f'cannot load functions from "{path}": not a function: {_kind(fn)}/{_name(fn)}')
        if annotations:
            meta = fn.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
    return fns


def load_observed(path: str) -> list[dict]:
    return _load_stream(path, "observed composed resources")


def load_required(paths: list[str], what: str = "required resources") -> list[dict]:
    out: list[dict] = []
    for p in paths:
        out.extend(_load_stream(p, what))
    return out


def load_credentials(path: str) -> list[dict]:
    """Secrets with ``data`` decoded to bytes; ``stringData`` is ignored, as without an API server."""
    secrets = _load_stream(path, "secrets")
    for s in secrets:
        decoded = {}
        for key, value in sorted(((s.get("data") or {})).items()):
            try:
                decoded[key] = base64.b64decode(str(value or ""), validate=True)
            except (binascii.Error, ValueError):
                raise RenderError(
                    f'cannot load secrets from "{path}": cannot parse YAML secret manifest: '
                    f"illegal base64 data in data.{key} of Secret {_name(s)!r}"
                ) from None
        s["data"] = decoded
    return secrets


def load_xrd(path: str) -> dict:
    try:
        return _single(path, "cannot read XRD file", "cannot unmarshal XRD YAML")
    except RenderError as err:
        raise err.wrap(f'cannot load XRD from "{path}"') from None


def load_context(files: dict[str, str], values: dict[str, str]) -> dict[str, Any]:
    """Context seeds: files first, then values (values win), each parsed as YAML/JSON."""
    raw: dict[str, str] = {}
    for key, path in files.items():
        try:
            raw[key] = _read(path)
        except RenderError as err:
            raise err.wrap(f'cannot read context value for key "{key}"') from None
    raw.update(values)
    out: dict[str, Any] = {}
    for key, text in raw.items():
        try:
            docs = reader.load_all(text)
        except Exception:  # noqa: BLE001 - reported like the CLI does
            raise RenderError(f'cannot unmarshal YAML/JSON for context key "{key}"') from None
        out[key] = docs[0] if docs else None
    return out
