"""The documentation's pages read as data: front matter, fences, includes, runnable blocks.

The rules these feed are written for people in docs/writing-docs.md; this module only parses.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml
from modelplane import paths

ROOT = paths.ROOT
DOCS = ROOT / "docs"
MANIFESTS = DOCS / "manifests"
RUNNABLE = {"sh", "bash", "shell"}
# The first line of a runnable block that cannot run on a bare machine, and who runs it instead.
NEEDS = re.compile(r"^#\s*needs:\s*(lab|tools|cluster|cloud|network|engine|install)\b")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<mark>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_TITLE = re.compile(r'title="([^"]*)"')
_SNIPPET = re.compile(r'^\s*--8<--\s+"(?P<path>[^"]+)"\s*$')


@dataclass
class Fence:
    """One fenced block: its language, body (indent removed) and where it starts."""

    lang: str
    body: str
    line: int
    end: int
    includes: list[str] = field(default_factory=list)
    title: str = ""

    @property
    def is_shape(self) -> bool:
        """An internal shape with placeholders (``title="Shape: ..."``), not a manifest to apply."""
        return self.title.startswith("Shape:")

    @property
    def needs(self) -> str | None:
        first = self.body.lstrip().splitlines()[0] if self.body.strip() else ""
        m = NEEDS.match(first)
        return m.group(1) if m else None


@dataclass
class Page:
    """A Markdown page of the site."""

    path: Path
    meta: dict
    text: str
    fences: list[Fence]

    @property
    def name(self) -> str:
        return str(self.path.relative_to(DOCS))

    def runnable(self) -> list[tuple[Fence, Fence | None]]:
        """Each sh block with the text block right after it (its output), if any."""
        out = []
        for i, fence in enumerate(self.fences):
            if fence.lang not in RUNNABLE:
                continue
            after = self.fences[i + 1] if i + 1 < len(self.fences) else None
            between = self.text.splitlines()[fence.end:after.line - 1] if after else []
            is_output = after is not None and after.lang == "text" and all(not b.strip() for b in between)
            out.append((fence, after if is_output else None))
        return out


def parse(path: Path) -> Page:
    text = path.read_text(encoding="utf-8")
    meta: dict = {}
    if text.startswith("---\n"):
        head, sep, _ = text[4:].partition("\n---\n")
        if sep:
            meta = yaml.safe_load(head) or {}
    return Page(path=path, meta=meta, text=text, fences=fences(text))


def fences(text: str) -> list[Fence]:
    """Every fenced block, nested in admonitions or lists too (their indent is removed)."""
    lines = text.splitlines()
    out: list[Fence] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, mark = m.group("indent"), m.group("mark")
        lang = m.group("info").strip().split()[0].lstrip(".{") if m.group("info").strip() else ""
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            close = lines[j].strip()
            if close.startswith(mark[0] * len(mark)) and set(close) == {mark[0]}:
                break
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        joined = "\n".join(body) + "\n"
        includes = [s.group("path") for s in map(_SNIPPET.match, body) if s]
        title = _TITLE.search(m.group("info"))
        out.append(Fence(lang=lang, body=joined, line=i + 1, end=j + 1, includes=includes,
                         title=title.group(1) if title else ""))
        i = j + 1
    return out


@cache
def pages() -> tuple[Page, ...]:
    """Every page of the site (Markdown under docs/, the manifests folder excepted)."""
    return tuple(parse(p) for p in sorted(DOCS.rglob("*.md")) if MANIFESTS not in p.parents)


def included_files() -> dict[str, list[str]]:
    """Included file (relative to the repository) -> the pages that include it."""
    out: dict[str, list[str]] = {}
    for page in pages():
        for fence in page.fences:
            for inc in fence.includes:
                out.setdefault(inc, []).append(page.name)
    return out


def expected_lines(text: str) -> list[str]:
    """The lines an output block promises: blank lines and ``...`` elisions dropped."""
    return [line.rstrip() for line in text.splitlines() if line.strip() and line.strip() != "..."]


def appear_in_order(wanted: list[str], printed: str) -> str | None:
    """The first wanted line found in no printed line (after the previous one's), or None.

    A wanted line may be part of a printed line (a table row without its changing columns)."""
    lines = printed.splitlines()
    at = 0
    for want in wanted:
        want = want.strip()
        while at < len(lines) and want not in lines[at]:
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None
