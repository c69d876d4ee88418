"""failover: which clusters hosting replicas are down, which have failed, and
when the next one would.

Down: listed but not Ready, or Ready without published pools. Failed: down
for ``after`` or longer (never with failover disabled, never when the
outage start is unknown). ``wake_in``: seconds until the next down cluster
fails, at least one second.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field

import pytest
from modelplane.deployment.failover import Outage, outages, wake_in
from modelplane.scheduler import Cluster

from tests.deployment.builders import at, by_name, cluster, when

FIVE = datetime.timedelta(minutes=5)
T4, T10 = when(4), when(10)


@dataclass(frozen=True)
class Case:
    name: str
    clusters: tuple[Cluster, ...]
    want: dict[str, Outage]
    since: dict[str, str] = field(default_factory=lambda: {"a": at(0), "b": at(0)})
    hosting: frozenset[str] = frozenset({"a", "b"})
    after: datetime.timedelta | None = FIVE
    now: datetime.datetime = T10


CASES = [
    Case("a Ready cluster with pools is not down", (cluster("a"),), {}),
    Case("a NotReady cluster is down", (cluster("a", ready=False),), {"a": Outage("a", at(0), True)}),
    Case("a Ready cluster that has not published its pools is down", (cluster("a", published=False),),
         {"a": Outage("a", at(0), True)}),
    Case("a down cluster hosting none of our replicas is ignored",
         (cluster("a", ready=False), cluster("b", ready=False)), {"b": Outage("b", at(0), True)},
         hosting=frozenset({"b"})),
    Case("down for less than after: not failed yet", (cluster("a", ready=False),),
         {"a": Outage("a", at(0), False)}, now=when(4)),
    Case("down for exactly after: failed", (cluster("a", ready=False),),
         {"a": Outage("a", at(0), True)}, now=when(5)),
    Case("a second short of after: not failed", (cluster("a", ready=False),),
         {"a": Outage("a", at(0), False)}, now=when(5) - datetime.timedelta(seconds=1)),
    Case("failover disabled: down forever, never failed", (cluster("a", ready=False),),
         {"a": Outage("a", at(0), False)}, after=None, now=when(10_000)),
    Case("an unknown start never fails", (cluster("a", ready=False),),
         {"a": Outage("a", "", False)}, since={}),
    Case("an unreadable start never fails", (cluster("a", ready=False),),
         {"a": Outage("a", "yesterday", False)}, since={"a": "yesterday"}),
    Case("a start with an offset is read as such", (cluster("a", ready=False),),
         {"a": Outage("a", "2026-01-01T01:00:00+01:00", False)}, since={"a": "2026-01-01T01:00:00+01:00"},
         now=when(4)),
    Case("each cluster on its own clock",
         (cluster("a", ready=False), cluster("b", ready=False)),
         {"a": Outage("a", at(0), True), "b": Outage("b", at(8), False)}, since={"a": at(0), "b": at(8)}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_outages(case: Case) -> None:
    got = outages(by_name(case.clusters), lambda name: case.since.get(name, ""), set(case.hosting), case.after, case.now)
    assert got == case.want, f"-want {case.want}, +got {got}"


@dataclass(frozen=True)
class Wake:
    name: str
    down: tuple[Outage, ...]
    want: float | None
    after: datetime.timedelta | None = FIVE
    now: datetime.datetime = T4


WAKES = [
    Wake("nothing down: no wake", (), None),
    Wake("one down: when it would fail", (Outage("a", at(0), False),), 60.0),
    Wake("the soonest of several", (Outage("a", at(2), False), Outage("b", at(0), False)), 60.0),
    Wake("failed ones are done", (Outage("a", at(0), True),), None),
    Wake("failed ones do not count among others", (Outage("a", at(-100), True), Outage("b", at(1), False)),
         120.0),
    Wake("an unknown start never fails: no wake", (Outage("a", "", False),), None),
    Wake("failover disabled: no wake", (Outage("a", at(0), False),), None, after=None),
    Wake("under a second away: one second", (Outage("a", at(0), False),), 1.0,
         now=when(5) - datetime.timedelta(milliseconds=200)),
    Wake("fractions of a second are kept", (Outage("a", at(0), False),), 1.5,
         now=when(5) - datetime.timedelta(seconds=1.5)),
]


@pytest.mark.parametrize("case", WAKES, ids=lambda c: c.name)
def test_wake_in(case: Wake) -> None:
    got = wake_in(case.down, case.after, case.now)
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_a_cluster_wakes_exactly_when_it_fails() -> None:
    # The promise that ties the two together: call again after wake_in and it has failed.
    since = {"a": at(0)}
    now = when(3)
    down = outages(by_name([cluster("a", ready=False)]), since.get, {"a"}, FIVE, now)
    wait = wake_in(down.values(), FIVE, now)
    assert wait is not None
    later = now + datetime.timedelta(seconds=wait)
    assert outages(by_name([cluster("a", ready=False)]), since.get, {"a"}, FIVE, later)["a"].failed
