"""Hypothesis strategies shared by the scheduler's property tests."""

from __future__ import annotations

from hypothesis import strategies as st
from modelplane.scheduler import Engine, Member

from tests.scheduler.builders import _deployment, _engine, _gang_engine, _request, _standalone

SELECTORS = ["mem >= 20", "mem >= 40", "mem >= 100", "arch == Hopper", "arch != Ada", "driver == gpu.nvidia.com"]


@st.composite
def deployments(draw):
    shape = draw(st.sampled_from(["plain", "gang", "pd"]))
    sel = tuple(draw(st.lists(st.sampled_from(SELECTORS), max_size=2)))
    count = draw(st.sampled_from([1, 2, 4, 8]))
    copies = draw(st.integers(1, 2))
    if shape == "plain":
        engines = [_engine(copies=copies, members=[_standalone(count, *sel)])]
    elif shape == "gang":
        engines = [_gang_engine("g", draw(st.integers(1, 2)), count, copies, *sel)]
    else:
        engines = [
            Engine("p", 1, "Prefill", (Member("Standalone", 1, (_request(count, *sel),)),)),
            Engine("d", copies, "Decode", (Member("Standalone", 1, (_request(draw(st.sampled_from([1, 8]))),)),)),
        ]
    selector = draw(st.sampled_from([{}, {"tier": "prod"}]))
    return _deployment(draw(st.integers(1, 4)), engines=engines, selector=selector,
                       mode="PrefillDecode" if shape == "pd" else "Unified")
