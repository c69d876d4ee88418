""".ci/run: which steps start, in which order, and what the final table and line say.

Driven through tests/ci/cirun.py: the real script, a stand-in make that takes no time, so each
verdict follows from the figures and the budget alone.
"""
from __future__ import annotations

import re

from tests.ci import cimodel
from tests.ci.cirun import ROOT, needs, run_ci

DEFAULTS = ["test", "docs-test", "tools-judges", "e2e", "images-test", "tools-lab", "lab-test",
            "tools-control-plane", "e2e-crossplane-images", "install-test"]
OPTIONAL = ["e2e-crossplane-images-long"]


def test_every_step_has_a_row_and_the_script_lists_the_steps_in_this_order():
    text = (ROOT / ".ci" / "run").read_text()
    assert f"defaults=({' '.join(DEFAULTS)})" in text
    assert f"optional=({' '.join(OPTIONAL)})" in text
    assert set(DEFAULTS + OPTIONAL) <= set(cimodel.rows())


def test_a_cold_run_of_every_default_step_fits_by_the_tables_own_figures():
    """A fresh machine must run every default step: in the model of a cold run (tests/ci/cimodel.py:
    the groups build in the background with what the foreground leaves), each default suite starts
    while it still fits with the margin. Lengthen a suite or a build and this fails until the table
    and the suites fit again."""
    planned = cimodel.plan(cimodel.rows(), DEFAULTS, needs())
    late = [p.step for p in planned if not p.fits]
    assert not late, "\n".join(f"{p.step}: {p.start:.0f}-{p.end:.0f} s{'' if p.fits else ' NOT RUN'}"
                                for p in planned)


def test_the_model_waits_for_a_build_and_credits_what_a_step_leaves():
    table = {"test": cimodel.Row("test", 100, 0, 200), "tools-a": cimodel.Row("tools-a", 300, 0, 0),
             "s": cimodel.Row("s", 100, 0, 100)}
    planned = {p.step: p for p in cimodel.plan(table, ["test", "tools-a", "s"], {"s": ["tools-a"]})}
    # make test keeps both cores busy: the build gets nothing, then has the machine for 300 s.
    assert (planned["s"].start, planned["s"].end) == (400, 500)
    table["test"] = cimodel.Row("test", 100, 0, 100)  # half the machine left: 50 s of build done
    planned = {p.step: p for p in cimodel.plan(table, ["test", "tools-a", "s"], {"s": ["tools-a"]})}
    assert planned["s"].start == 350 and planned["tools-a"].end == 350


def small(**figures: tuple[int, int]) -> dict[str, tuple[int, int]]:
    """Every step at 10 s, but the ones given (dashes written as underscores)."""
    out = {step: (10, 10) for step in DEFAULTS + OPTIONAL}
    out.update({step.replace("_", "-"): f for step, f in figures.items()})
    return out


def test_a_failed_tools_group_stops_only_the_suites_that_need_it(tmp_path):
    run = run_ci(tmp_path, fail=("tools-lab",))
    assert run.code == 1, run.out  # a build that fails twice fails the run, after the others ran
    assert "FAILED: tools-lab" in run.last
    assert run.calls == ["test", "docs-test", "tools-judges", "e2e", "images-test", "tools-lab", "tools-lab"]
    assert "NOT RUN: make tools-lab FAILED twice" in run.line("lab-test")
    # Nothing left needs Crossplane core once the lab's tools are missing: it is not built.
    assert "NOT RUN: no suite left that needs it" in run.line("tools-control-plane")
    assert re.search(r"default steps that did not pass: tools-lab lab-test tools-control-plane "
                     r"e2e-crossplane-images install-test$", run.last), run.last
    assert "NOT RUN" in run.line("e2e-crossplane-images-long")


def test_a_step_that_does_not_fit_is_not_started_and_a_shorter_one_after_it_is(tmp_path):
    run = run_ci(tmp_path, budget=1000, times=small(docs_test=(900, 900)))
    assert run.code == 0, run.out
    assert "docs-test" not in run.calls and "e2e" in run.calls
    assert "NOT RUN: needs 1350 s (900 s x 150%)" in run.line("docs-test")
    assert "not run for lack of time: docs-test" in run.last


def test_a_tools_group_is_not_built_when_its_first_suite_would_not_fit_after_it(tmp_path):
    run = run_ci(tmp_path, budget=2000, times=small(tools_control_plane=(500, 5), e2e_crossplane_images=(900, 900)))
    assert "tools-control-plane" not in run.calls and "e2e-crossplane-images" not in run.calls
    assert "lab-test" in run.calls
    assert "e2e-crossplane-images's 900 s" in run.line("tools-control-plane")


def test_a_cached_group_is_judged_by_its_cached_figure(tmp_path):
    run = run_ci(tmp_path, cached=("judges",), times={"tools-judges": (900, 7), "tools-lab": (800, 9)})
    assert "tools-judges=cached" in run.out and "tools-lab=cold" in run.out
    assert re.search(r"tools-judges\s+default\s+7 s", run.line("tools-judges"))
    assert re.search(r"tools-lab\s+default\s+800 s", run.line("tools-lab"))


def test_a_suite_that_fails_once_is_retried_visibly(tmp_path):
    run = run_ci(tmp_path, fail=("lab-test",), fail_once=True)
    assert run.code == 0, run.out
    assert run.calls.count("lab-test") == 2
    assert "passed on retry" in run.line("lab-test")
    assert "make lab-test FAILED once; retrying" in run.out


def test_a_suite_that_fails_twice_fails_the_run_after_the_others(tmp_path):
    run = run_ci(tmp_path, fail=("e2e",))
    assert run.code == 1
    assert run.calls[-1] == "e2e-crossplane-images-long"
    assert "FAILED: e2e" in run.last


def test_make_test_sees_an_empty_tools_cache_so_what_it_runs_never_depends_on_the_build(tmp_path):
    run_ci(tmp_path, background=True)
    seen = (tmp_path / "calls.test-tools-dir").read_text().strip()
    assert seen and seen != str(tmp_path / "tools")


def test_make_test_failing_stops_the_run(tmp_path):
    run = run_ci(tmp_path, fail=("test",))
    assert run.code == 1
    assert run.calls == ["test"]
    assert "NOT RUN: make test failed" in run.line("e2e")


def test_a_row_with_a_non_numeric_figure_is_refused(tmp_path):
    (tmp_path / ".ci").mkdir()
    run = run_ci(tmp_path, times={"e2e": ("soon", 3)})  # type: ignore[dict-item]
    assert run.code == 2 and "row e2e: cold 'soon'" in run.out


# --- the tools groups in the background -------------------------------------------------------

SUITES = [s for s in DEFAULTS + OPTIONAL if not s.startswith("tools-")]
GROUPS = [s for s in DEFAULTS if s.startswith("tools-")]


def test_in_the_background_the_groups_build_in_order_and_every_suite_runs(tmp_path):
    run = run_ci(tmp_path, background=True)
    assert run.code == 0, run.out
    assert run.foreground == SUITES
    assert run.builds == GROUPS
    assert "building in the background at idle priority: judges lab control-plane" in run.out
    for group in GROUPS:
        assert re.search(r"\d+ \(background\)\s+passed$", run.line(group)), run.line(group)


def test_a_failed_background_build_is_retried_in_the_foreground_and_the_rest_built_there(tmp_path):
    run = run_ci(tmp_path, background=True, fail=("tools-lab",), fail_once=True)
    assert run.code == 0, run.out
    assert run.builds == ["tools-judges", "tools-lab", "tools-lab", "tools-control-plane"]
    assert "FAILED in the background" in run.out and "passed on retry" in run.line("tools-lab")
    assert "the background builder stopped before it; building in the foreground" in run.out
    assert run.foreground == SUITES


def test_a_background_build_that_fails_again_in_the_foreground_blocks_its_suites(tmp_path):
    run = run_ci(tmp_path, background=True, fail=("tools-lab",))
    assert run.code == 1
    assert run.builds.count("tools-lab") == 2
    assert "FAILED twice" in run.line("tools-lab")
    assert "lab-test" not in run.foreground and "e2e" in run.foreground


def test_a_suite_is_not_started_when_its_tools_are_still_building_past_its_last_start(tmp_path):
    run = run_ci(tmp_path, background=True, budget=1600, slow=("tools-lab",),
                 times=small(lab_test=(1000, 1000), e2e_crossplane_images=(1000, 1000)))
    assert run.code == 0, run.out
    assert "still building when make lab-test (needs 1500 s) could last start" in run.line("tools-lab")
    assert "lab-test" not in run.foreground and "images-test" in run.foreground
    assert "not run for lack of time: tools-lab" in run.last
