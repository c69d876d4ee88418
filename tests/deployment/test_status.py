"""status: replicas, placements, removals and the Scheduled condition.

``placements`` lists every replica that stays: those placed this call (of
the current revision) and the extra ones still serving (not draining),
each with its revision, by index then cluster. ``ready`` counts the ready
ones whatever their revision, ``updated`` those of the current revision;
the deployment is Ready when at least ``desired`` are ready.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane import conditions as C
from modelplane.deployment import status
from modelplane.deployment.drain import DELETING, DRAINING, EVICTED, REMOVED, Removal
from modelplane.deployment.observed import Child
from modelplane.scheduler import Placement, Schedule

from tests.deployment.builders import (
    NAME,
    OLD,
    REV,
    child,
    member_placement,
    observed_of,
    placement,
    schedule,
    unplaced,
)


def _by_key(*children: Child) -> dict[tuple[int, str], Child]:
    return {c.key: c for c in children}


@dataclass(frozen=True)
class Case:
    name: str
    sched: Schedule
    want: list[tuple[int, str, bool, str | None]]  # index, cluster, ready, revision (None: no field)
    children: tuple[Child, ...] = ()  # observed
    revision: str = REV


CASES = [
    Case("nothing", schedule(), []),
    Case("a new placement: not ready, of the current revision", schedule(placements=[placement()]),
         [(0, "a", False, REV)]),
    Case("a placement whose replica is ready", schedule(placements=[placement()]), [(0, "a", True, REV)],
         children=(child(),)),
    Case("ready is the replica's own, whatever its endpoint", schedule(placements=[placement()]),
         [(0, "a", True, REV)], children=(child(endpoint=False),)),
    Case("no revision given: no revision field", schedule(placements=[placement()]), [(0, "a", False, None)],
         revision=""),
    Case("an extra still serving, with its own revision", schedule(extras=[placement(1, "b")]),
         [(1, "b", True, OLD)], children=(child(1, "b", revision=OLD),)),
    Case("an extra composed before revisions: no revision field", schedule(extras=[placement(1, "b")]),
         [(1, "b", False, None)], children=(child(1, "b", revision="", ready=False),)),
    Case("a draining extra is not listed", schedule(extras=[placement(1, "b")]), [],
         children=(child(1, "b", draining="Removed: x"),)),
    Case("an extra that is not observed is not listed", schedule(extras=[placement(1, "b")]), []),
    Case("placed and extras together, by index then cluster",
         schedule(placements=[placement(2, "a"), placement(0, "b")], extras=[placement(0, "a"), placement(1, "c")]),
         [(0, "a", True, OLD), (0, "b", False, REV), (1, "c", True, OLD), (2, "a", False, REV)],
         children=(child(0, "a", revision=OLD), child(1, "c", revision=OLD))),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_placements(case: Case) -> None:
    items = status.placements(status.Report(NAME, 2, case.sched, observed_of(*case.children),
                                            _by_key(*case.children), revision=case.revision))
    got = [(i["index"], i["cluster"], i["ready"], i.get("revision")) for i in items]
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_a_placement_names_its_replica_and_members() -> None:
    p = Placement(index=3, cluster="b", order="o",
                  members=(member_placement("prefill", "Standalone", "h100"), member_placement("decode", "Leader", "h200")))
    [item] = status.placements(status.Report(NAME, 1, schedule(placements=[p]), {}, revision=REV))
    assert item == {"index": 3, "name": f"{NAME}-3-b", "cluster": "b", "ready": False,
                    "members": [{"engine": "prefill", "role": "Standalone", "pool": "h100"},
                                {"engine": "decode", "role": "Leader", "pool": "h200"}],
                    "revision": REV}


def test_an_extra_is_described_from_its_observed_replica() -> None:
    c = child(1, "b", revision=OLD)
    c.obj["spec"]["engines"] = [{"name": "e", "members": [{"role": "Standalone", "pool": "old-pool"}]}]
    [item] = status.placements(status.Report(NAME, 1, schedule(extras=[placement(1, "b", pool="new-pool")]), {},
                                            _by_key(c), revision=REV))
    assert item == {"index": 1, "name": c.name, "cluster": "b", "ready": True,
                    "members": [{"engine": "e", "role": "Standalone", "pool": "old-pool"}], "revision": OLD}


def test_removals_as_status() -> None:
    got = status.removals([Removal(child(0, "a"), EVICTED, "cluster a no longer exists", DRAINING),
                           Removal(child(2, "c"), REMOVED, "scaled down to 1", DELETING)])
    assert got == [
        {"index": 0, "name": f"{NAME}-0-a", "cluster": "a", "cause": EVICTED, "reason": "cluster a no longer exists",
         "phase": DRAINING},
        {"index": 2, "name": f"{NAME}-2-c", "cluster": "c", "cause": REMOVED, "reason": "scaled down to 1",
         "phase": DELETING},
    ]


@dataclass(frozen=True)
class Counts:
    name: str
    sched: Schedule
    children: tuple[Child, ...]
    want: dict[str, int]
    desired: int = 2


COUNTS = [
    Counts("nothing placed yet", schedule(), (), {"desired": 2, "scheduled": 0, "ready": 0, "updated": 0}),
    Counts("placed, one ready", schedule(placements=[placement(0, "a"), placement(1, "b")]), (child(0, "a"),),
           {"desired": 2, "scheduled": 2, "ready": 1, "updated": 2}),
    Counts("mid-rollout: ready whatever the revision, updated only the current",
           schedule(placements=[placement(2, "c")], extras=[placement(0, "a"), placement(1, "b")]),
           (child(0, "a", revision=OLD), child(1, "b", revision=OLD)),
           {"desired": 2, "scheduled": 3, "ready": 2, "updated": 1}),
    Counts("a draining extra is not scheduled", schedule(placements=[placement(0, "a")], extras=[placement(1, "b")]),
           (child(0, "a"), child(1, "b", draining="Removed: x")),
           {"desired": 2, "scheduled": 1, "ready": 1, "updated": 1}),
]


@pytest.mark.parametrize("case", COUNTS, ids=lambda c: c.name)
def test_replica_counts(case: Counts) -> None:
    got = status.fields(status.Report(NAME, case.desired, case.sched, observed_of(*case.children),
                                      _by_key(*case.children), revision=REV))["replicas"]
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_fields() -> None:
    leaving = [Removal(child(5, "z"), REMOVED, "no longer scheduled", DRAINING)]
    got = status.fields(status.Report(NAME, 1, schedule(placements=[placement()]), {}, {}, leaving, REV, 4))
    assert set(got) == set(status.FIELDS)
    assert got["selector"] == f"modelplane.ai/deployment={NAME}"
    assert got["revision"] == REV and got["observedGeneration"] == 4
    assert [r["index"] for r in got["removals"]] == [5]
    assert [p["index"] for p in got["placements"]] == [0]


@pytest.mark.parametrize("kw,absent", [({"revision": ""}, "revision"), ({"generation": None}, "observedGeneration")])
def test_fields_leaves_out_what_it_does_not_know(kw: dict[str, Any], absent: str) -> None:
    args: dict[str, Any] = {"revision": REV, "generation": 1, **kw}
    got = status.fields(status.Report(NAME, 1, schedule(), {}, **args))
    assert absent not in got
    assert got["removals"] == []


def test_generation_zero_is_reported() -> None:
    assert status.fields(status.Report(NAME, 1, schedule(), {}, generation=0))["observedGeneration"] == 0


@dataclass(frozen=True)
class Sched:
    name: str
    sched: Schedule
    want: status.Scheduled


SCHEDULED = [
    Sched("every replica placed", schedule(placements=[placement()], message="1/1 placed"),
          status.Scheduled(True, C.SCHEDULED_ALL, "1/1 placed")),
    Sched("nothing to place", schedule(message=""), status.Scheduled(True, C.SCHEDULED_ALL, "")),
    Sched("some placed, some not", schedule(placements=[placement()], unplaced=[unplaced(1)], message="m"),
          status.Scheduled(False, C.PARTIALLY_SCHEDULED, "m")),
    Sched("none placed", schedule(unplaced=[unplaced(0)], message="m"), status.Scheduled(False, C.UNSCHEDULABLE, "m")),
    Sched("only extras stay: none placed", schedule(extras=[placement()], unplaced=[unplaced(0)], message="m"),
          status.Scheduled(False, C.UNSCHEDULABLE, "m")),
]


@pytest.mark.parametrize("case", SCHEDULED, ids=lambda c: c.name)
def test_scheduled(case: Sched) -> None:
    got = status.scheduled(case.sched)
    assert got == case.want, f"-want {case.want}, +got {got}"


@dataclass(frozen=True)
class Ready:
    name: str
    replicas: dict[str, Any] | None
    want: bool


READY = [
    Ready("no status yet", None, False),
    Ready("none ready", {"desired": 2, "ready": 0}, False),
    Ready("fewer than desired", {"desired": 2, "ready": 1}, False),
    Ready("as many as desired", {"desired": 2, "ready": 2}, True),
    Ready("more than desired (mid-rollout)", {"desired": 2, "ready": 3}, True),
    Ready("nothing desired is not Ready", {"desired": 0, "ready": 0}, False),
    Ready("no ready count", {"desired": 1}, False),
]


@pytest.mark.parametrize("case", READY, ids=lambda c: c.name)
def test_ready(case: Ready) -> None:
    st = {} if case.replicas is None else {"replicas": case.replicas}
    assert status.ready(st) is case.want
