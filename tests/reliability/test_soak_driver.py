"""The soak's own arithmetic, cheaply: how cases are split, counted and tabled (make soak runs it in full)."""
from __future__ import annotations

from tests.reliability import fuzzing, soak


def test_jobs_cover_every_case_once_served_runs_first():
    todo = soak.jobs(["a", "b"], cases=2500, sample=500, batch=1000, seed=1)
    assert [j[:2] for j in todo[:2]] == [("served", "a"), ("served", "b")]
    for fn in "ab":
        assert sum(n for kind, f, _, n in todo if f == fn) == 2500
        assert [n for kind, f, _, n in todo if f == fn and kind == "batch"] == [1000, 1000]
    assert len({seed for _, _, seed, _ in todo}) == len(todo)  # every batch draws its own cases


def test_a_failing_case_is_counted_and_the_batch_goes_on(monkeypatch):
    seen = []

    def every_third(function, rsp, elapsed):
        seen.append(1)
        return "planted" if len(seen) % 3 == 0 else None

    monkeypatch.setattr(fuzzing, "problem", every_third)
    r = soak.run_batch("compose-inference-gateway", seed=7, cases=12)
    assert r.cases == 12 and len(r.calls_s) == 12
    assert len(r.failures) == 4 and all("planted [seed 7" in f for f in r.failures)
    assert r.peak_rss_mb > 0 and r.generate_cpu_s > 0


def test_the_table_counts_failures_and_rss_growth():
    ok = soak.Result("f", "served", cases=500, calls_s=[0.001] * 500, server_rss_mb=(100.0, 110.0), wire_cases=9)
    grew = soak.Result("g", "served", cases=500, server_rss_mb=(100.0, 140.0),
                       wire_failures=["g: gRPC UNKNOWN"])
    batch = soak.Result("f", "batch", cases=9500, calls_s=[0.002] * 99 + [0.5], failures=["f: boom"])
    lines, problems = soak.table([ok, grew, batch], ["f", "g", "h"])
    f, g, h = lines[2:]
    assert f.split()[1:4] == ["10000", "1", "500.0"]
    assert "100 -> 140 MB GREW" in g and "missing" in h
    assert problems == 1 + (1 + 1) + 1   # f's failure; g's growth and wire failure; h never served
    assert not soak.rss_grew(100.0, 124.0) and soak.rss_grew(100.0, 125.0) and not soak.rss_grew(400.0, 440.0)
