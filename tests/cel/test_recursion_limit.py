"""Importing the CEL engine leaves a raised recursion limit alone.

celpy's Environment sets the limit to 2,500, even down from a higher one; render and
validate raise it to read documents 10,000 levels deep (render.deepstack), and the
engine is imported in the middle of a validate run. A fresh process, so the import
is a first one.
"""
from __future__ import annotations

import subprocess
import sys


def test_importing_cel_keeps_a_higher_recursion_limit():
    code = "import sys; sys.setrecursionlimit(30000); import modelplane.cel.adapter; print(sys.getrecursionlimit())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "30000"), done.stderr
