"""How the docs site's code blocks read: output told apart from commands, long lines wrapped.

Two rewrites of a page's HTML after Markdown has rendered it (``sitehooks.on_page_content``):

- A ``text`` block right after a runnable one (``sh``, ``bash``, ``shell``; only blank lines
  between) is that command's **output**, the same rule ``tests/docs`` uses to check it. Its block
  gets the ``output`` class, so the stylesheet can draw it unlike a command you would type.
- Every code line (pymdownx.highlight's ``line_spans``: one ``<span id="__span-B-L">`` per
  line) carries its own indentation as ``--indent``. A line too long for the page wraps instead
  of scrolling out of sight, and the stylesheet starts its continuation a few columns deeper
  than the line itself, so a wrapped YAML value still reads as part of its key, not as a new
  key further left.

Both work on the HTML pymdownx writes with ``pygments_lang_class`` and ``line_spans`` on
(``mkdocs.yml``); HTML without those marks passes through unchanged.
"""
from __future__ import annotations

import html
import re

RUNNABLE = ("sh", "bash", "shell")

# A runnable block, then (whitespace only between) the opening of a text block. A highlight
# block holds no nested div, so the first "</div>" after a block's start closes it; the body
# may not run past it, or a later block's "</div>" could pair a command with a far text block.
_COMMAND_THEN_TEXT = re.compile(
    r'(<div class="language-(?:' + "|".join(RUNNABLE) + r') highlight">(?:(?!</div>).)*</div>\s*)'
    r'<div class="language-text highlight">', re.DOTALL)
_LINE = re.compile(r'<span id="__span-\d+-\d+">')
_TAG = re.compile(r"<[^>]+>")


def mark_output(page_html: str) -> str:
    """``page_html`` with each command's output block classed ``output``."""
    return _COMMAND_THEN_TEXT.sub(r'\1<div class="language-text highlight output">', page_html)


def leading_columns(line_html: str) -> int:
    """How many columns of indentation a rendered code line starts with (tabs count as one)."""
    text = html.unescape(_TAG.sub("", line_html))
    return len(text) - len(text.lstrip(" \t"))


def indent_lines(page_html: str) -> str:
    """``page_html`` with every code line's span carrying ``style="--indent:N"`` when N > 0."""
    out = []
    at = 0
    for m in _LINE.finditer(page_html):
        # pymdownx ends every line's text with its newline, inside the line's span.
        end = page_html.find("\n", m.end())
        columns = leading_columns(page_html[m.end():end if end >= 0 else len(page_html)])
        out.append(page_html[at:m.start()])
        out.append(m.group(0) if columns == 0 else f'{m.group(0)[:-1]} style="--indent:{columns}">')
        at = m.end()
    out.append(page_html[at:])
    return "".join(out)
