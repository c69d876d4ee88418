"""MkDocs hooks of the documentation site (``mkdocs.yml`` names this file).

Code blocks are rewritten after rendering so output reads unlike commands and long lines wrap
under their own indentation (``codeblocks``; the look is ``docs/stylesheets/site.css``).

Diagrams are text kept in the repository (``docs/diagrams/NAME.dot``, Graphviz) and become
``diagrams/NAME.svg`` at build time, so a page links an image like any other and the built
site needs no script from a CDN to draw them. ``dot`` comes from Debian's graphviz package
(``hack/docs-packages.sh`` installs it); a diagram that does not render fails the build.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from modelplane.dev import codeblocks

DIAGRAMS = "diagrams"


class DiagramError(RuntimeError):
    """A diagram source that Graphviz cannot render, or no Graphviz at all."""


def render_svg(source: Path) -> str:
    """The SVG Graphviz draws for ``source``; its XML prologue dropped (the page inlines nothing)."""
    dot = shutil.which("dot")
    if dot is None:
        raise DiagramError("Graphviz's dot is not on PATH: run hack/docs-packages.sh "
                           "(as root: apt-get install graphviz)")
    done = subprocess.run([dot, "-Tsvg", str(source)], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise DiagramError(f"{source}: dot failed: {done.stderr.strip()}")
    return done.stdout


def on_files(files, config):
    """Add ``diagrams/NAME.svg`` for every ``docs/diagrams/NAME.dot``."""
    from mkdocs.structure.files import File  # docs extra only: imported when MkDocs runs us

    folder = Path(config["docs_dir"]) / DIAGRAMS
    for source in sorted(folder.glob("*.dot")):
        files.append(File.generated(config, f"{DIAGRAMS}/{source.stem}.svg", content=render_svg(source)))
    return files


def on_page_content(html, page, config, files):
    """Class each command's output block and give every code line its indentation."""
    return codeblocks.indent_lines(codeblocks.mark_output(html))
