"""``modelplane validate FILE|DIR... [--apis DIR] [--crds DIR]``: offline admission.

Like ``crossplane beta validate``: every resource is defaulted, checked against
its schema (unknown fields, types, constraints) and its CEL rules, and reported
on one line::

    [✓] modelplane.ai/v1alpha1, Kind=ModelDeployment, ml-team/qwen-demo validated successfully
    [x] schema validation error modelplane.ai/v1alpha1, Kind=ModelDeployment, ml-team/qwen-demo : spec.replicas: ... (in FILE)
    [x] compose-model-deployment refuses modelplane.ai/v1alpha1, Kind=ModelDeployment, ml-team/chat : spec...cel: ... (in FILE)
    [!] could not find CRD/XRD for: example.org/v1, Kind=Thing (in FILE)
    Total 3 resources: 1 missing schemas, 1 success cases, 1 failure cases

An admitted XR is then read as the function composing it reads it: what
the function would refuse (a ModelDeployment's selector calling ``matches()``)
fails here too, with the function's own message (``validate.refusals``).

A ``[!] warning`` line (before the resource's verdict, exit code unchanged)
marks what the API server accepts but ``crossplane beta validate`` rejects: a
null in a field that is not nullable, which the server drops.

Schemas: our XRDs (``--apis``, default ``apis/``), XRDs and CRDs found among
the inputs, then every upstream CRD and built-in kind (``--crds``, default
``schemas/upstream`` or ``$MODELPLANE_CRDS``). The XRDs themselves are checked
first (explicit scope, structural schema, rules that compile). Exit 1 on any
failure (and on missing schemas with ``--error-on-missing-schemas``), 2 on
usage errors.

Files are read as kubectl reads them (``manifests``): a file that does not
parse is one ``[x] cannot read FILE: ... line L, column C`` line; a key given
twice keeps its last value; a resource larger than the API server or etcd
accepts fails with the server's own words. Anything unexpected is one
``internal error`` line (a bug to report), never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

import yaml

from modelplane import paths
from modelplane.render import deepstack, reader
from modelplane.validate import Validator, manifests
from modelplane.validate.upstream import UpstreamSchemas


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="modelplane validate",
                                description="Validate manifests against our XRDs and upstream schemas, offline.")
    p.add_argument("inputs", nargs="+", metavar="FILE|DIR", help="manifests (multi-document YAML; dirs recursively)")
    p.add_argument("--apis", action="append", metavar="DIR",
                   help=f"XRDs/CRDs to validate against (repeatable; default {paths.APIS})")
    p.add_argument("--crds", metavar="DIR", help="upstream CRDs and kubernetes-openapi (default: crds_dir())")
    p.add_argument("--no-upstream", action="store_true", help="do not load upstream CRDs or built-in kinds")
    p.add_argument("--error-on-missing-schemas", action="store_true", help="exit 1 when a schema is missing")
    return p


def _shown(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def _gvk(doc: dict) -> str:
    return f"{doc.get('apiVersion')}, Kind={doc.get('kind')}"


def _name(doc: dict) -> str:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "<unnamed>")
    return f"{meta['namespace']}/{name}" if meta.get("namespace") else str(name)


def _line(d: manifests.Document) -> str:
    """`` (line N)`` where document ``d`` starts, read again for this error only."""
    try:
        line = reader.document_line(reader.decode(Path(d.source).read_bytes()), d.index)
    except (OSError, yaml.YAMLError):
        return ""
    return f" (line {line})" if line else ""


def run(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run ``modelplane validate``; returns the exit code."""
    err = stderr or sys.stderr
    try:
        # Room for the deepest manifest the reader accepts: the schema walk recurses per level.
        return deepstack.call(lambda: _run(argv, stdout or sys.stdout, err))
    except RecursionError:
        print("modelplane validate: a manifest nests too deeply to check; nest fewer levels", file=err)
        return 1
    except Exception as e:  # noqa: BLE001 - one line, never a traceback; the soak counts these as bugs
        print(f"modelplane validate: internal error: {type(e).__name__}: {' '.join(str(e).split())[:500]}", file=err)
        return 1


def _run(argv: list[str], out: TextIO, err: TextIO) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    missing_inputs = [p for p in args.inputs if not Path(p).exists()]
    if missing_inputs:
        print(f"modelplane validate: no such file or directory: {', '.join(missing_inputs)}", file=err)
        return 2

    upstream = None
    if not args.no_upstream:
        try:
            upstream = UpstreamSchemas.load(args.crds)
        except FileNotFoundError as e:
            print(f"modelplane validate: {e} (or pass --crds DIR, or --no-upstream)", file=err)
            return 2
    failures = 0
    try:
        validator = Validator.from_paths([Path(a) for a in (args.apis or [paths.APIS])], upstream=upstream or False)
    except (OSError, yaml.YAMLError) as e:
        print(f"modelplane validate: cannot load schemas: {e}", file=err)
        return 2

    docs: list[manifests.Document] = []
    for f in manifests.yaml_files(args.inputs):
        try:
            docs += [manifests.Document(str(f), i, body) for i, body in enumerate(manifests.load_file(f))]
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            print(f"[x] cannot read {_shown(str(f))}: {' '.join(str(e).split())}", file=out)
            failures += 1
    for d in docs:  # XRDs and CRDs among the inputs are schemas for the other inputs too
        validator.add_document(d.body, d.source)

    for finding in validator.check_xrds():
        print(f"[x] invalid {finding.resource} : {finding.path}: {finding.message} (in {_shown(finding.source)})",
              file=out)
        failures += 1

    missing = success = 0
    for d in docs:
        body = d.body
        if not isinstance(body, dict) or not isinstance(body.get("apiVersion"), str) \
                or not isinstance(body.get("kind"), str):
            # A list or a scalar says so, and where it starts; a mapping only lacks the two strings.
            what = "" if isinstance(body, dict) else \
                f"{_line(d)}: a {'list' if isinstance(body, list) else 'scalar'}, not an object"
            print(f"[x] invalid document {_shown(d.source)}#{d.index}{what}: "
                  "a resource needs apiVersion and kind strings", file=out)
            failures += 1
            continue
        large = manifests.too_large(body)
        if large:
            print(f"[x] schema validation error {_gvk(body)}, {_name(body)} : {large} (in {_shown(d.source)})",
                  file=out)
            failures += 1
            continue
        findings = validator.validate_document(body, d.source)
        for w in validator.warnings(body, d.source):
            print(f"[!] warning {_gvk(body)}, {_name(body)} : {w.path}: {w.message} (in {_shown(d.source)})",
                  file=out)
        if any(f.missing_schema for f in findings):
            print(f"[!] could not find CRD/XRD for: {_gvk(body)} (in {_shown(d.source)})", file=out)
            missing += 1
        elif findings:
            for f in findings:
                where = f"{f.path}: " if f.path else ""
                verdict = f"{f.refused_by} refuses" if f.refused_by else "schema validation error"
                print(f"[x] {verdict} {_gvk(body)}, {_name(body)} : {where}{f.message} "
                      f"(in {_shown(d.source)})", file=out)
            failures += 1
        else:
            print(f"[✓] {_gvk(body)}, {_name(body)} validated successfully", file=out)
            success += 1
    total = missing + success + failures
    print(f"Total {total} resources: {missing} missing schemas, {success} success cases, "
          f"{failures} failure cases", file=out)
    return 1 if failures or (missing and args.error_on_missing_schemas) else 0
