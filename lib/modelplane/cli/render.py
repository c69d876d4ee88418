"""``modelplane render XR COMPOSITION FUNCTIONS``: classic ``crossplane render`` flags and output.

stdout carries only the YAML stream, written once rendering succeeded;
any failure prints ``crossplane: error: <msg>`` on stderr and exits 1, so
scripts can switch between this and the real CLI. Files are UTF-8, or UTF-16
or UTF-32 with a byte-order mark; a file that is neither is named with the
line and column of its first bad byte; anything else unexpected is one
``internal error`` line (a bug to report), never a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterator
from typing import TextIO

from modelplane.render import deepstack, loader, reader
from modelplane.render.defaults import default_xr
from modelplane.render.engine import RenderInputs, documents, render
from modelplane.render.errors import RenderError
from modelplane.render.runners import FunctionPool
from modelplane.render.schemas import load_required_schemas
from modelplane.render.yamlout import dump_documents

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """A Go duration (``1m``, ``30s``, ``1m30s``, ``1.5h``) in seconds."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(body):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not body or pos != len(body):
        raise RenderError(f'--timeout: time: invalid duration "{text}"')
    return -total if text.startswith("-") else total


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise RenderError(f'{flag}: expected "<key>=<value>" got "{item}"')
        out[key] = value
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit 2; render reports and exits 1
        raise RenderError(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="modelplane render", description="Render an XR through its Composition's functions.")
    p.add_argument("composite_resource", metavar="XR")
    p.add_argument("composition", metavar="COMPOSITION")
    p.add_argument("functions", metavar="FUNCTIONS")
    p.add_argument("--context-files", action="append", default=[], metavar="KEY=FILE")
    p.add_argument("--context-values", action="append", default=[], metavar="KEY=JSON")
    p.add_argument("-r", "--include-function-results", action="store_true")
    p.add_argument("-x", "--include-full-xr", action="store_true")
    p.add_argument("-o", "--observed-resources", metavar="PATH")
    p.add_argument("--extra-resources", action="append", default=[], metavar="PATH")
    p.add_argument("-e", "--required-resources", action="append", default=[], metavar="PATH")
    p.add_argument(
        "-s",
        "--required-schemas",
        metavar="DIR",
        help="directory (walked recursively) of OpenAPI v3 JSON documents, one per group-version, as "
        "`kubectl get --raw /openapi/v3/<group>/<version>` prints them; they answer the schemas "
        "functions require (requirements.schemas and a step's requirements.requiredSchemas). "
        "Without it, or for a kind none of them defines, a required schema arrives empty",
    )
    p.add_argument("-c", "--include-context", action="store_true")
    p.add_argument("--function-credentials", metavar="PATH")
    p.add_argument("-a", "--function-annotations", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--timeout", default="1m")
    p.add_argument("--xrd", metavar="PATH")
    p.add_argument("--strict-namespace", action="store_true", help="engine (CLI >= v2.3) namespace semantics")
    return p


def _undecodable(path: str) -> tuple[str, UnicodeDecodeError] | None:
    """The file under ``path`` (itself, or a YAML file of the folder) that is not UTF-8, and why."""
    files = [path] if not os.path.isdir(path) else sorted(
        os.path.join(path, f) for f in os.listdir(path) if f.endswith((".yaml", ".yml")))
    for f in files:
        try:
            with open(f, "rb") as fh:
                data = fh.read()
            if reader.bom_encoding(data) in (None, "utf-8"):  # the others are read by their mark
                data.decode("utf-8")
        except UnicodeDecodeError as err:
            return f, err
        except OSError:
            continue
    return None


def utf8_error(path: str, err: UnicodeDecodeError) -> str:
    """``"PATH": yaml: invalid UTF-8 ...`` with the line and column of the first bad byte."""
    data = err.object if isinstance(err.object, bytes) else b""
    return f'"{path}": {reader.invalid_utf8(data, err)}'


@contextlib.contextmanager
def _utf8(*inputs: tuple[str, str | None]) -> Iterator[None]:
    """Turn a decoding failure while loading ``inputs`` ((what, path) pairs) into the loader's
    one-line error naming the file that is not UTF-8 (the exception itself does not say)."""
    try:
        yield
    except UnicodeDecodeError as err:
        for what, path in inputs:
            found = _undecodable(path) if path else None
            if found:
                raise RenderError(f"cannot load {what} from {utf8_error(*found)}") from None
        raise RenderError(f"cannot load inputs: yaml: invalid UTF-8: {err.reason}") from None


def load_inputs(args: argparse.Namespace) -> RenderInputs:
    """Read and check every input file, in the real CLI's order."""
    with _utf8(("composite resource", args.composite_resource)):
        xr = loader.load_xr(args.composite_resource)
    with _utf8(("Composition", args.composition)):
        comp = loader.load_composition(args.composition)
    loader.check_composition(xr, comp)
    with _utf8(("functions", args.functions)):
        fns = loader.load_functions(args.functions, _pairs(args.function_annotations, "--function-annotations"))
    rest = [("XRD", args.xrd), ("function credentials", args.function_credentials),
            ("observed resources", args.observed_resources),
            *[("extra resources", p) for p in args.extra_resources],
            *[("required resources", p) for p in args.required_resources],
            *[("context", f.partition("=")[2]) for f in args.context_files]]
    with _utf8(*rest):
        return _load_rest(args, xr, comp, fns)


def _load_rest(args: argparse.Namespace, xr: dict, comp: dict, fns: list[dict]) -> RenderInputs:
    if args.xrd:
        xrd = loader.load_xrd(args.xrd)
        try:
            default_xr(xr, xrd)
        except RenderError as err:
            raise err.wrap(f'cannot default values for XR "{(xr.get("metadata") or {}).get("name", "")}"') from None
    creds = loader.load_credentials(args.function_credentials) if args.function_credentials else []
    observed = loader.load_observed(args.observed_resources) if args.observed_resources else []
    extra = loader.load_required(args.extra_resources, "extra resources")
    required = loader.load_required(args.required_resources)
    schemas = load_required_schemas(args.required_schemas) if args.required_schemas else []
    context = loader.load_context(
        _pairs(args.context_files, "--context-files"), _pairs(args.context_values, "--context-values")
    )
    return RenderInputs(
        xr=xr,
        composition=comp,
        functions=fns,
        observed=observed,
        extra_resources=extra,
        required_resources=required,
        credentials=creds,
        schemas=schemas,
        context=context,
        timeout=parse_duration(args.timeout),
        strict_namespace=args.strict_namespace,
    )


def run(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None, pool: FunctionPool | None = None) -> int:
    """Render and print; returns the exit code. ``pool`` lets callers reuse functions.

    Runs with room for the deepest input the loader accepts (``deepstack``): encoding it for the
    functions and printing it recurse once or more per level."""
    return deepstack.call(lambda: _run(argv, stdout or sys.stdout, stderr or sys.stderr, pool))


def _run(argv: list[str], stdout: TextIO, stderr: TextIO, pool: FunctionPool | None) -> int:
    try:
        args = parser().parse_args(argv)
        inputs = load_inputs(args)
        if pool is None:
            with FunctionPool() as own:
                out = render(inputs, own)
        else:
            out = render(inputs, pool)
        text = dump_documents(
            documents(
                out,
                inputs.xr,
                full_xr=args.include_full_xr,
                results=args.include_function_results,
                context=args.include_context,
            )
        )
    except RenderError as err:
        print(f"crossplane: error: {err}", file=stderr)
        return 1
    except RecursionError:  # within MAX_DEPTH levels and deepstack's limit this is not reached
        print("crossplane: error: the inputs nest too deeply to render; nest fewer levels", file=stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - one line, never a traceback; the soak counts these as bugs
        print(f"crossplane: error: internal error: {type(err).__name__}: {' '.join(str(err).split())[:500]}",
              file=stderr)
        return 1
    stdout.write(text)
    stdout.flush()
    return 0
