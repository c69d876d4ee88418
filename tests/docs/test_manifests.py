"""Every manifest the docs show is a file, and `modelplane validate` admits it (or, for a file
wrong on purpose, rejects it with the lines the page prints)."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from modelplane.cli import validate as validate_cli

from tests.docs import pages

_MANIFEST = re.compile(r"^apiVersion:.*$", re.MULTILINE)
_KIND = re.compile(r"^kind:.*$", re.MULTILINE)
YAML_SUFFIXES = (".yaml", ".yml")


def _doc_manifests() -> list[Path]:
    """Every YAML file under docs/manifests (symlinks kept: they are what a reader opens)."""
    return sorted(p for p in pages.MANIFESTS.rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file())


def _included_manifests() -> list[Path]:
    return sorted({pages.ROOT / inc for inc in pages.included_files() if Path(inc).suffix in YAML_SUFFIXES})


def _validate(path: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = validate_cli.run([str(path.relative_to(pages.ROOT)), "--error-on-missing-schemas"], stdout=out, stderr=out)
    return code, out.getvalue()


def _relative(path: Path) -> str:
    return str(path.relative_to(pages.ROOT))


def test_pages_show_manifests_only_by_include():
    pasted = []
    for page in pages.pages():
        for fence in page.fences:
            if fence.lang in ("yaml", "yml") and not fence.includes and not fence.is_shape \
                    and _MANIFEST.search(fence.body) and _KIND.search(fence.body):
                pasted.append(f"{page.name}:{fence.line}")
    assert pasted == [], ("a page pastes a whole manifest: move it to a file under docs/manifests and "
                          f"include it with a snippet line (docs/writing-docs.md): {pasted}")


def test_no_page_shows_an_escaped_include():
    # ";--8<--" is the snippet line escaped: it prints the line instead of the file. Only the
    # page that teaches the syntax shows it.
    escaped = [f"{page.name}:{fence.line}" for page in pages.pages() for fence in page.fences
               if page.name != "writing-docs.md" and any(line.lstrip().startswith(";--8<--")
                                                          for line in fence.body.splitlines())]
    assert escaped == [], "write --8<-- (not ;--8<--) to include a file"


def test_every_include_exists():
    missing = [f"{inc} (in {', '.join(where)})" for inc, where in pages.included_files().items()
               if not (pages.ROOT / inc).is_file()]
    assert missing == []


@pytest.mark.parametrize("path", [p for p in sorted(set(_doc_manifests()) | set(_included_manifests()))
                                  if not p.name.endswith(".wrong.yaml")], ids=_relative)
def test_manifest_is_admitted(monkeypatch, path):
    monkeypatch.chdir(pages.ROOT)
    code, printed = _validate(path)
    assert code == 0, printed


WRONG = [p for p in _doc_manifests() if p.name.endswith(".wrong.yaml")]


@pytest.mark.parametrize("path", WRONG, ids=_relative)
def test_wrong_manifest_fails_with_the_lines_its_page_prints(monkeypatch, path):
    monkeypatch.chdir(pages.ROOT)
    expected = path.with_name(path.name.removesuffix(".yaml") + ".txt")
    assert expected.is_file(), f"{_relative(path)} is wrong on purpose: write {_relative(expected)} with its error"
    code, printed = _validate(path)
    assert code == 1, printed
    missing = pages.appear_in_order(pages.expected_lines(expected.read_text()), printed)
    assert missing is None, f"validate no longer prints {missing!r}; it printed:\n{printed}"
    shown_by = pages.included_files()
    assert _relative(path) in shown_by and _relative(expected) in shown_by, \
        "a page that shows a mistake includes the manifest and the error it gives"


def test_at_least_one_page_shows_a_mistake():
    assert WRONG, "the troubleshooting pages show at least one manifest wrong on purpose"
