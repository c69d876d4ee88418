"""The package's import graph, read from source: every ``import`` wherever it stands.

Imports inside functions count (a lazy import is still a dependency), relative
imports are resolved, and ``importlib.import_module("modelplane....")`` with a
literal name counts too. A module's *unit* is the first name under
``modelplane`` (``modelplane.simulate.loop`` -> ``simulate``); the functions'
``fn.py`` files (loaded by path, folders with dashes) belong to ``functions``.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Edge:
    """``source`` (a module) imports ``target`` (a module, or a name in it) at ``where``."""

    source: str
    target: str
    names: tuple[str, ...]   # the names of a ``from target import ...``; () for ``import target``
    where: str               # path:line

    @property
    def source_unit(self) -> str:
        return unit(self.source)

    @property
    def target_unit(self) -> str:
        return unit(self.target)


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def modules(roots: dict[str, Path]) -> dict[str, Path]:
    """Dotted module name -> file, for each ``package name -> folder`` in ``roots``."""
    out = {}
    for package, folder in roots.items():
        for path in sorted(Path(folder).rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p.replace("-", "_") for p in rel.parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([name] if name else []))


def edges(module: str, path: Path) -> Iterator[Edge]:
    """Every import of ``module`` (its file ``path``) into ``modelplane``."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Edge(module, alias.name, (), where)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node.level, node.module) if node.level else node.module or ""
            yield Edge(module, target, tuple(a.name for a in node.names), where)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield Edge(module, node.args[0].value, (), where)


def graph(roots: dict[str, Path], top: str = "modelplane") -> list[Edge]:
    """Every edge between two different units of ``top``.

    ``from modelplane import x`` is an edge to unit ``x`` (not to the package root)."""
    out = []
    for module, path in modules(roots).items():
        for e in edges(module, path):
            if not (e.target == top or e.target.startswith(top + ".")):
                continue
            if e.target == top:   # from modelplane import a, b: one edge a name
                out += [Edge(e.source, f"{top}.{n}", (), e.where) for n in e.names if n != "LAYERS"]
                continue
            if e.source_unit != e.target_unit:
                out.append(e)
    return [e for e in out if e.source_unit != e.target_unit]


def violations(edges_: list[Edge], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Each edge that imports upward or sideways, and each unit with no layer, as one line."""
    level = {u: i for i, layer in enumerate(layers) for u in layer}
    out = []
    for e in edges_:
        s, t = e.source_unit, e.target_unit
        for u in (s, t):
            if u and u not in level:
                out.append(f"{e.where}: {u!r} belongs to no layer: add it to modelplane.LAYERS")
        if s in level and t in level:
            if level[t] > level[s]:
                out.append(f"{e.where}: {s} imports {t}, a higher layer ({e.target})")
            elif level[t] == level[s]:
                out.append(f"{e.where}: {s} imports {t}, a package of its own layer ({e.target})")
    return sorted(set(out))


def private_reaches(edges_: list[Edge], package: str, public: set[str]) -> list[str]:
    """Imports of ``package`` by other units that go past its public names."""
    out = []
    for e in edges_:
        if e.target_unit != package:
            continue
        if e.target != f"modelplane.{package}":
            out.append(f"{e.where}: {e.source} imports {e.target}: use `from modelplane.{package} import ...`")
        else:
            out += [f"{e.where}: {e.source} imports {package}.{n}, not in modelplane.{package}.__all__"
                    for n in e.names if n not in public]
    return out
