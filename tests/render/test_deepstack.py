"""``render.deepstack``: a call with room for the deepest document the readers accept."""
from __future__ import annotations

import copy
import sys
import threading

import pytest
from modelplane.render import deepstack, nodes


def _nested(levels: int) -> list:
    root = inner = []
    for _ in range(levels - 1):
        inner.append([])
        inner = inner[0]
    return root


def test_a_document_at_the_depth_limit_deep_copies_inside_and_not_outside():
    deep = _nested(nodes.MAX_DEPTH)
    with pytest.raises(RecursionError):
        copy.deepcopy(deep)
    got = deepstack.call(lambda: copy.deepcopy(deep))
    assert got is not deep and deepstack.call(lambda: got == deep)  # comparing recurses too


def test_the_result_comes_back_and_the_limit_is_restored():
    before = sys.getrecursionlimit()
    seen = deepstack.call(lambda: (sys.getrecursionlimit(), threading.current_thread() is threading.main_thread()))
    assert seen == (deepstack.RECURSION_LIMIT, False)
    assert sys.getrecursionlimit() == before


def test_an_exception_is_raised_in_the_callers_thread():
    class Boom(Exception):
        pass

    with pytest.raises(Boom, match="bad input"):
        deepstack.call(lambda: (_ for _ in ()).throw(Boom("bad input")))


def test_a_call_from_inside_runs_in_the_same_worker():
    names = deepstack.call(lambda: (threading.current_thread().name,
                                    deepstack.call(lambda: threading.current_thread().name)))
    assert names[0] == names[1] != threading.main_thread().name
