"""modelplane.clock: the one seam where the wall clock is read, and the rule that keeps it one."""
from __future__ import annotations

import ast
import datetime
from pathlib import Path

import pytest
from modelplane import clock, paths
from modelplane.errors import InputError
from modelplane.pipeline.composition import NOW_CONTEXT_KEY, Composition
from modelplane.pipeline.server import response

from tests.clock import skewed
from tests.support import request

# Reading the OS clock is allowed here only: the seam, and certificates that OpenSSL checks
# against the OS clock (kube/pki.py says why).
ALLOWED = {"lib/modelplane/clock.py", "lib/modelplane/kube/pki.py"}


def _wall_clock_reads(path: Path, root: Path = paths.ROOT) -> list[str]:
    """Each call in ``path`` that reads the date without going through ``modelplane.clock``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        f, owner = node.func, node.func.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        nargs = len(node.args)
        read = ((owner_name in ("datetime", "date") and f.attr in ("now", "utcnow", "today"))
                or (owner_name == "time" and f.attr in ("time", "time_ns"))
                or (owner_name == "time" and f.attr in ("gmtime", "localtime", "ctime") and nargs == 0)
                or (owner_name == "time" and f.attr == "strftime" and nargs < 2))
        if read:
            out.append(f"{path.relative_to(root)}:{node.lineno}: {owner_name}.{f.attr}(): "
                       "read the date through modelplane.clock")
    return out


def test_lib_and_functions_read_the_date_only_through_the_clock():
    files = [*sorted(paths.PACKAGE.rglob("*.py")), *sorted((paths.ROOT / "functions").rglob("*.py"))]
    assert len(files) > 100, "the scan found almost nothing: it is broken, not the code clean"
    found = [line for f in files if str(f.relative_to(paths.ROOT)) not in ALLOWED for line in _wall_clock_reads(f)]
    assert found == []


def test_the_scan_sees_each_way_of_reading_the_date(tmp_path):
    f = tmp_path / "probe.py"
    text = ("import datetime, time\nfrom datetime import date\n"
            "datetime.datetime.now(datetime.UTC)\ndatetime.datetime.utcnow()\ndate.today()\ntime.time()\n"
            "time.gmtime()\ntime.strftime('%H')\n"
            "time.gmtime(0)\ntime.strftime('%H', time.gmtime(0))\ntime.monotonic()\n")
    f.write_text(text)
    found = [line.split(": ", 1)[1].split(":")[0] for line in _wall_clock_reads(f, tmp_path)]
    assert found == ["datetime.now()", "datetime.utcnow()", "date.today()", "time.time()", "time.gmtime()",
                     "time.strftime()"]


def test_now_is_aware_and_in_utc():
    t = clock.now()
    assert t.tzinfo is not None and t.utcoffset() == datetime.timedelta(0)


def test_use_installs_a_source_and_returns_the_one_it_replaced():
    with skewed.using(skewed.at("2030-05-06T07:08:09+00:00")):
        assert clock.stamp() == "2030-05-06T07:08:09Z"
        inner = clock.use(clock.system)
        clock.use(inner)
        assert clock.now() == datetime.datetime(2030, 5, 6, 7, 8, 9, tzinfo=datetime.UTC)
    assert abs(clock.now() - clock.system()) < datetime.timedelta(hours=1)


def test_stamp_writes_utc_whatever_the_zone():
    t = datetime.datetime(2026, 1, 1, 2, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert clock.stamp(t) == "2026-01-01T00:00:00Z"


def _composition(context: dict | None = None) -> Composition:
    req = request({"kind": "X"})
    if context is not None:
        req.context.update(context)
    return Composition(req, response.to(req), "test")


def test_a_composition_without_a_time_in_its_context_reads_the_clock():
    with skewed.using(skewed.at("2031-01-01T00:00:00+00:00")):
        assert _composition().now() == datetime.datetime(2031, 1, 1, tzinfo=datetime.UTC)


def test_a_time_in_the_context_wins_over_the_clock():
    with skewed.using(skewed.at("2031-01-01T00:00:00+00:00")):
        got = _composition({NOW_CONTEXT_KEY: "2026-01-01T00:05:00Z"}).now()
    assert got == datetime.datetime(2026, 1, 1, 0, 5, tzinfo=datetime.UTC)


def test_a_bad_time_in_the_context_names_the_key():
    with pytest.raises(InputError, match=r"context\[modelplane.ai/now\]"):
        _composition({NOW_CONTEXT_KEY: "soon"}).now()
