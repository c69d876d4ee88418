"""The docs site's code blocks: output told from commands, every line carrying its indentation."""
from __future__ import annotations

from dataclasses import dataclass

from modelplane.dev import codeblocks


def _block(lang: str, *lines: str, n: int = 0) -> str:
    """A block as pymdownx.highlight writes it with pygments_lang_class and line_spans on."""
    spans = "".join(f'<span id="__span-{n}-{i}">{line}\n</span>' for i, line in enumerate(lines, 1))
    return f'<div class="language-{lang} highlight"><pre><span></span><code>{spans}</code></pre></div>'


@dataclass
class Case:
    name: str
    html: str
    outputs: int


CASES = [
    Case("text right after a command is its output",
         _block("sh", "modelplane simulate x") + "\n" + _block("text", "DEPLOYMENT", n=1), 1),
    Case("every runnable language counts",
         _block("bash", "ls") + _block("text", "a", n=1) + _block("shell", "ls", n=2) + _block("text", "b", n=3), 2),
    Case("a paragraph between makes it a plain text block",
         _block("sh", "ls") + "\n<p>Then:</p>\n" + _block("text", "a", n=1), 0),
    Case("text after yaml is not output", _block("yaml", "a: 1") + _block("text", "a", n=1), 0),
    Case("a command far above a yaml block does not claim the text after it",
         _block("sh", "ls") + "\n<p>Then:</p>\n" + _block("yaml", "a: 1", n=1) + _block("text", "a", n=2), 0),
    Case("a command's second text block is not output",
         _block("sh", "ls") + _block("text", "a", n=1) + _block("text", "b", n=2), 1),
]


def test_mark_output():
    for case in CASES:
        got = codeblocks.mark_output(case.html).count('highlight output"')
        assert got == case.outputs, f"{case.name}: want {case.outputs} output blocks, got {got}"


def test_leading_columns_reads_through_tags_and_entities():
    assert codeblocks.leading_columns('<span class="w">    </span><span class="nt">cel</span>') == 4
    assert codeblocks.leading_columns("&#32;&#32;x") == 2
    assert codeblocks.leading_columns("x   y") == 0
    assert codeblocks.leading_columns("") == 0


def test_indent_lines_marks_only_indented_lines():
    html = _block("yaml", "spec:", '<span class="w">  </span>replicas: 2', '<span class="w">      </span>- cel: x')
    got = codeblocks.indent_lines(html)
    assert '<span id="__span-0-1">spec:' in got
    assert '<span id="__span-0-2" style="--indent:2">' in got
    assert '<span id="__span-0-3" style="--indent:6">' in got
    assert codeblocks.indent_lines("<p>no code</p>") == "<p>no code</p>"
