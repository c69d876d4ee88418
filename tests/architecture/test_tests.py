"""The tests' own house rules: tests mirror the packages, and what they share lives in
fixture modules (builders, case tables, helpers), never in a test file or a conftest.

- No module under tests/ imports a ``test_*`` module, a ``conftest`` or a ``__main__``
  (imports inside functions count, relative imports are resolved).
- No two test files share a basename, wherever they stand.
- Every test file defines a test: a ``test_`` function, or a test class.
"""
from __future__ import annotations

import ast
import fnmatch
import textwrap
from collections import defaultdict
from pathlib import Path

from tests.architecture import imports

TESTS = Path(__file__).resolve().parent.parent
TEST_FILES = ("test_*.py", "*_test.py")  # pytest's python_files


def _is_test_file(path: Path) -> bool:
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in TEST_FILES)


def _not_shared(module: str) -> str | None:
    """Why ``module`` may not be imported, or None."""
    last = module.rsplit(".", 1)[-1]
    if last == "conftest":
        return "a conftest"
    if last == "__main__":
        return "a script"
    if _is_test_file(Path(last + ".py")):
        return "a test module"
    return None


def cross_imports(root: Path, package: str = "tests") -> list[str]:
    """Each import, under ``root`` (the package ``package``), of a test module, a conftest or a
    ``__main__``, as one line."""
    known = imports.modules({package: root})
    out = []
    for module, path in known.items():
        for e in imports.edges(module, path):
            # ``from tests.x import test_y`` imports the module tests.x.test_y.
            for target in (e.target, *(f"{e.target}.{n}" for n in e.names)):
                why = _not_shared(target) if target in known else None
                if why:
                    out.append(f"{e.where}: {module} imports {target}, {why}: "
                               "move what it shares into a fixture module")
    return sorted(set(out))


def shared_basenames(root: Path) -> list[str]:
    """Each basename two or more test files under ``root`` share, with their paths."""
    by_name = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if _is_test_file(path):
            by_name[path.name].append(str(path.relative_to(root)))
    return [f"{name}: {', '.join(found)}" for name, found in sorted(by_name.items()) if len(found) > 1]


def _defines_a_test(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            return True
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id.startswith("test") for t in node.targets):
            return True  # test_x = make_test(...)
        if isinstance(node, ast.ClassDef) and (node.name.startswith("Test") or any(
                isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")
                for m in node.body)):
            return True
    return False


def files_without_a_test(root: Path) -> list[str]:
    """Each test file under ``root`` that defines no test."""
    return [str(path.relative_to(root)) for path in sorted(root.rglob("*.py"))
            if _is_test_file(path) and not _defines_a_test(ast.parse(path.read_text(encoding="utf-8")))]


def test_no_module_imports_a_test_module_or_a_conftest():
    assert len(imports.modules({"tests": TESTS})) > 100, "the tree reader found almost nothing"
    assert cross_imports(TESTS) == []


def test_no_two_test_files_share_a_basename():
    assert shared_basenames(TESTS) == []


def test_every_test_file_defines_a_test():
    assert files_without_a_test(TESTS) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "tests"
    for name, text in files.items():
        f = root / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text))
    return root


def test_the_checker_sees_imports_of_test_modules_and_conftests_wherever_they_stand(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/conftest.py": "X = 1\n",
        "a/builders.py": "from tests.a import conftest\n",                  # a fixture module reaching a conftest
        "a/cases.py": "def rows():\n    from .test_one import ROWS\n",      # relative, inside a function
        "a/test_one.py": "from tests.a.conftest import X\nROWS = []\n",     # from a conftest
        "a/test_two.py": "from tests.a import builders, test_one\n",        # a module named in a from-import
        "a/test_ok.py": "from tests.a import builders\nfrom tests.a.cases import rows\n",  # fixture modules: fine
        "b/__init__.py": "",
        "b/__main__.py": "",
        "b/test_three.py": "import tests.a.test_one\nfrom ..b import __main__\n",  # absolute; relative up
    })
    found = cross_imports(root)
    assert [line.split(": ", 1)[1] for line in found] == [
        "tests.a.builders imports tests.a.conftest, a conftest: move what it shares into a fixture module",
        "tests.a.cases imports tests.a.test_one, a test module: move what it shares into a fixture module",
        "tests.a.test_one imports tests.a.conftest, a conftest: move what it shares into a fixture module",
        "tests.a.test_two imports tests.a.test_one, a test module: move what it shares into a fixture module",
        "tests.b.test_three imports tests.a.test_one, a test module: move what it shares into a fixture module",
        "tests.b.test_three imports tests.b.__main__, a script: move what it shares into a fixture module",
    ]
    assert all(line.startswith(str(root)) for line in found), "each line names the file and line"


def test_the_checker_sees_test_files_that_share_a_basename(tmp_path):
    root = _tree(tmp_path, {
        "a/test_x.py": "", "b/test_x.py": "", "b/c/test_x.py": "",
        "a/test_y.py": "", "a/x_test.py": "", "b/x_test.py": "",
        "a/helpers.py": "", "b/helpers.py": "",  # fixture modules may share a name
    })
    assert shared_basenames(root) == [
        "test_x.py: a/test_x.py, b/c/test_x.py, b/test_x.py",
        "x_test.py: a/x_test.py, b/x_test.py",
    ]


def test_the_checker_sees_a_test_file_without_a_test(tmp_path):
    root = _tree(tmp_path, {
        "test_builders_only.py": """
            def build():
                def test_nested():  # not collected: nested
                    pass
            class Rows:
                def check(self):
                    pass
            """,
        "test_cases_only.py": "CASES = [1, 2]\n",
        "test_function.py": "def test_it():\n    pass\n",
        "test_async.py": "async def test_it():\n    pass\n",
        "test_class.py": "class TestIt:\n    pass\n",
        "test_method.py": "class Cases(object):\n    def test_it(self):\n        pass\n",
        "test_assigned.py": "test_it = lambda: None\n",
        "builders.py": "X = 1\n",  # not a test file
    })
    assert files_without_a_test(root) == ["test_builders_only.py", "test_cases_only.py"]
