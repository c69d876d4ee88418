"""Malformed and hostile YAML files, and how to run each command on one of them.

Shared by the quick table (``test_malformed_yaml``) and the soak's limits
(``tests/reliability/test_cli_limits``). Every command must answer a bad file
with one clear line naming the file (and where in it, when the problem has a
place), exit 1 or 2, and no traceback.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from modelplane import paths

CONFIGMAP = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: ml\n"


def laughs(levels: int = 9) -> bytes:
    """The billion laughs: nine lists of nine aliases, nine levels deep (9^9 strings if expanded)."""
    out = CONFIGMAP + b'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, levels):
        out += f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n".encode()
    return out + f"data:\n  x: *a{levels - 1}\n".encode()


@dataclass(frozen=True)
class Bad:
    name: str
    content: bytes
    where: str  # what the error line must show besides the file's name: a position or the reason


BAD = [
    Bad("tab indentation", CONFIGMAP + b"data:\n\tx: y\n", "line 7"),
    Bad("unclosed quote", CONFIGMAP + b'data:\n  x: "open\n', "line"),
    Bad("anchor whose value holds itself", b"apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: x\n  labels: *m\n",
        "contains itself"),
    Bad("billion laughs", laughs(), "excessive aliasing"),
    Bad("binary", bytes(range(0x80, 0x100)) * 8, "invalid UTF-8: byte 0x80 at line 1, column 1"),
    Bad("latin-1", CONFIGMAP + b"data:\n  note: caf\xe9\n", "invalid UTF-8: byte 0xe9 at line 7, column 12"),
    Bad("UTF-16 without a byte-order mark", CONFIGMAP.decode().encode("utf-16-le"), "position 1"),
    Bad("NUL byte", b"apiVersion: v1\x00\nkind: X\n", "position"),
    Bad("nested deeper than go-yaml reads", CONFIGMAP + b"data:\n  x: " + b"[" * 9_999 + b"]" * 9_999 + b"\n",
        "line 7: exceeded max depth of 10000"),
    Bad("a list, not an object", CONFIGMAP + b"---\n- a\n- b\n", "list"),
    Bad("a scalar, not an object", b"just a string\n", "scalar"),
]

FUNCTIONS = (b"apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: modelplane-compose-model-service\n"
             b"spec:\n  package: x\n")


@dataclass
class Answer:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return [line for line in (self.out + self.err).splitlines() if line.strip()]


def validate(path: Path) -> Answer:
    from modelplane.cli import validate as cli
    out, err = io.StringIO(), io.StringIO()
    code = cli.run([str(path)], stdout=out, stderr=err)
    return Answer(code, out.getvalue(), err.getvalue())


def render(xr: Path, functions: Path) -> Answer:
    """``modelplane render XR <ModelService's Composition> FUNCTIONS``."""
    from modelplane.cli import render as cli
    out, err = io.StringIO(), io.StringIO()
    code = cli.run([str(xr), str(paths.APIS / "modelservices" / "composition.yaml"), str(functions)],
                   stdout=out, stderr=err)
    return Answer(code, out.getvalue(), err.getvalue())


def simulate(directory: Path) -> Answer:
    from modelplane.cli import simulate as cli
    out, err = io.StringIO(), io.StringIO()
    code = cli.run([str(directory)], stdout=out, stderr=err)
    return Answer(code, out.getvalue(), err.getvalue())
