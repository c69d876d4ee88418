"""The house rule: each package imports only the layers below it (``modelplane.LAYERS``)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import modelplane
from modelplane import lab, paths

from tests.architecture import imports

ROOTS = {
    "modelplane": paths.PACKAGE,
    "modelplane.functions": paths.ROOT / "functions",
    "modelplane.schemas": paths.ROOT / "schemas",
}


def test_no_package_imports_upward_or_sideways():
    edges = imports.graph(ROOTS)
    assert len(edges) > 100, "the graph reader found almost nothing: it is broken, not the code clean"
    assert imports.violations(edges, modelplane.LAYERS) == []


def test_every_package_has_a_layer():
    units = {imports.unit(m) for m in imports.modules(ROOTS)} - {""}
    layered = {u for layer in modelplane.LAYERS for u in layer}
    assert sorted(units - layered) == []
    assert sorted(layered - units) == [], "a layer names a package that does not exist"


def test_the_lab_is_used_through_its_public_names_only():
    assert imports.private_reaches(imports.graph(ROOTS), "lab", set(lab.__all__)) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        f = tmp_path / "modelplane" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text))
    return {"modelplane": tmp_path / "modelplane"}


LAYERS = (("low",), ("mid", "side"), ("top",))


def test_the_checker_sees_imports_wherever_they_stand(tmp_path):
    roots = _tree(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from modelplane.top import x\n",            # upward, inside a function
        "mid/__init__.py": "from . import b\n",                                   # relative, same package
        "mid/b.py": "from .. import side\nimport modelplane.low.a\n",             # relative sideways; downward
        "side/__init__.py": "import importlib\nimportlib.import_module('modelplane.top.cli')\n",
        "top/__init__.py": "from modelplane import low, mid\n",
        "top/x.py": "",
        "top/cli.py": "",
    })
    found = imports.violations(imports.graph(roots), LAYERS)
    assert [line.split(": ", 1)[1] for line in found] == [
        "low imports top, a higher layer (modelplane.top)",
        "mid imports side, a package of its own layer (modelplane.side)",
        "side imports top, a higher layer (modelplane.top.cli)",
    ]
    assert all(line.startswith(str(tmp_path)) for line in found), "each line names the file and line"


def test_the_checker_names_a_package_without_a_layer(tmp_path):
    roots = _tree(tmp_path, {"__init__.py": "", "low/__init__.py": "from modelplane import extra\n",
                             "extra.py": ""})
    assert any("'extra' belongs to no layer" in v for v in imports.violations(imports.graph(roots), LAYERS))


def test_the_checker_sees_a_reach_past_public_names(tmp_path):
    roots = _tree(tmp_path, {"__init__.py": "", "lab/__init__.py": "", "lab/runner.py": "",
                             "e2e/__init__.py": "from modelplane.lab import up, hidden\n"
                                                "from modelplane.lab.runner import x\n"})
    found = imports.private_reaches(imports.graph(roots), "lab", {"up"})
    assert [f.split(": ", 1)[1] for f in found] == [
        "modelplane.e2e imports lab.hidden, not in modelplane.lab.__all__",
        "modelplane.e2e imports modelplane.lab.runner: use `from modelplane.lab import ...`",
    ]


def _packages() -> list[Path]:
    return sorted(p.parent for p in paths.PACKAGE.glob("*/__init__.py"))


def test_the_develop_page_table_names_every_package_and_vocabulary_module():
    readme = (paths.ROOT / "docs" / "develop.md").read_text(encoding="utf-8")
    table = [line for line in readme.splitlines() if line.startswith("| `lib/modelplane/")]
    text = "\n".join(table)
    missing = [p.name for p in _packages() if f"`{p.name}/`" not in text and f"/{p.name}/`" not in text]
    vocabulary = next(line for line in table if line.startswith("| `lib/modelplane/*.py`"))
    missing += [m for m in modelplane.LAYERS[0] if f"`{m}`" not in vocabulary]
    assert missing == []


def test_each_package_docstring_maps_its_modules():
    """A package's docstring is its map: it names every module in it (``name`` or ``name.py``)."""
    unnamed = []
    for package in _packages():
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
        unnamed += [f"{package.name}/{f.name}" for f in sorted(package.glob("*.py"))
                    if not f.name.startswith("_") and f"``{f.stem}``" not in doc and f"``{f.name}``" not in doc]
    assert unnamed == []
