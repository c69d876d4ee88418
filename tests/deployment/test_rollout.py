"""rollout: one step from older revisions to the current one, and Progressing.

(tests/functions/test_model_deployment_rollout.py walks whole rollouts
through the function; here: the step's arithmetic and choice of whom to
retire, and every branch of the Progressing condition.)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from modelplane import conditions as C
from modelplane.deployment.observed import Child
from modelplane.deployment.rollout import Progress, Standing, progress, step
from modelplane.deployment.strategy import RECREATE, Strategy
from modelplane.scheduler import HELD, KEPT, Schedule

from tests.deployment.builders import OLD, REV, child, placement, schedule, unplaced

WHY = f"outdated: revision {REV} replaces it"
ROLLING = Strategy()  # surge 1, unavailable 0
Key = tuple[int, str]


def _old(index: int, cluster: str, available: bool = True) -> Child:
    return child(index, cluster, revision=OLD, ready=available)


def _new(index: int, cluster: str = "n", available: bool = True) -> Child:
    return child(index, cluster, ready=available)


def _everywhere(c: Child) -> bool:
    return True


@dataclass(frozen=True)
class Step:
    name: str
    new: tuple[Child, ...]
    old: tuple[Child, ...]
    target: int
    retire: tuple[Key, ...] = ()  # in the order chosen
    strategy: Strategy = ROLLING
    replicas: int = 3
    old_draining: int = 0
    movable: Callable[[Child], bool] = _everywhere


STEPS = [
    Step("nothing outdated: keep them all", (_new(0),), (), 3),
    Step("surge first: one more new replica, nothing retired", (), (_old(0, "a"), _old(1, "b"), _old(2, "c")), 1),
    Step("one new serves: one old goes, from the busiest cluster",
         (_new(5),), (_old(0, "b"), _old(1, "b"), _old(2, "c")), 1, ((1, "b"),)),
    Step("one new serves: one old goes, highest index first",
         (_new(5),), (_old(0, "a"), _old(1, "b"), _old(2, "c")), 1, ((2, "c"),)),
    Step("new replicas count in a cluster's load",
         (_new(5, "a"), _new(6, "a")), (_old(0, "a"), _old(1, "b")), 2, ((0, "a"),)),
    Step("unavailable old replicas go first, wherever they are",
         (_new(5),), (_old(0, "a", available=False), _old(1, "b"), _old(2, "b")), 1, ((0, "a"),)),
    Step("unavailable old replicas go first, highest index first",
         (), (_old(0, "a", available=False), _old(1, "a", available=False), _old(2, "b")), 1, ((1, "a"),),
         strategy=Strategy(max_surge=1, max_unavailable=1)),
    Step("maxUnavailable 2: two available old go at once to make room",
         (), (_old(0, "a"), _old(1, "b"), _old(2, "c")), 1, ((2, "c"), (1, "b")),
         strategy=Strategy(max_surge=1, max_unavailable=2)),
    Step("an old replica that may not move is skipped for the next",
         (_new(5),), (_old(0, "a"), _old(1, "b"), _old(2, "b")), 1, ((1, "b"),),
         movable=lambda c: c.key != (2, "b")),
    Step("no old replica may move: none goes", (_new(5),), (_old(0, "a"),), 1, (), replicas=1,
         movable=lambda c: False),
    Step("two new serve, one old left: the last new one surges in before it goes",
         (_new(5), _new(6)), (_old(0, "a"),), 3),
    Step("all new serve: the last old one goes", (_new(5), _new(6), _new(7)), (_old(0, "a"),), 3, ((0, "a"),)),
    Step("never more than spec.replicas new", (_new(5), _new(6), _new(7), _new(8)), (_old(0, "a"),), 3,
         ((0, "a"),)),
    Step("a large surge is capped by spec.replicas", (), (_old(0, "a"),), 1, (),
         strategy=Strategy(max_surge=5, max_unavailable=0), replicas=1),
    Step("Recreate: every movable old replica goes, nothing new placed",
         (), (_old(0, "a"), _old(1, "b")), 0, ((0, "a"),), strategy=Strategy(RECREATE, 0, 3),
         movable=lambda c: c.cluster != "b"),
    Step("Recreate: nothing placed while old replicas drain", (), (), 0, strategy=Strategy(RECREATE, 0, 3),
         old_draining=1),
    Step("RollingUpdate: draining old replicas do not hold anything back", (), (), 3, old_draining=2),
]


@pytest.mark.parametrize("case", STEPS, ids=lambda c: c.name)
def test_step(case: Step) -> None:
    got = step(case.strategy, case.replicas, REV, case.new, case.old, case.old_draining, case.movable)
    want_retire = {k: WHY for k in case.retire}
    assert (got.target, list(got.retire.items())) == (case.target, list(want_retire.items())), \
        f"-want {(case.target, want_retire)}, +got {got}"


def test_a_step_never_leaves_fewer_than_replicas_minus_unavailable_available() -> None:
    # Every combination of a small rollout: the retired available old replicas
    # never take availability below R - U.
    for surge in range(3):
        for unavail in range(3):
            if surge == unavail == 0:
                continue
            s = Strategy(max_surge=surge, max_unavailable=unavail)
            for n_new in range(4):
                for n_new_av in range(n_new + 1):
                    for n_old in range(4):
                        for n_old_av in range(n_old + 1):
                            new = [_new(10 + i, available=i < n_new_av) for i in range(n_new)]
                            old = [_old(i, "a", available=i < n_old_av) for i in range(n_old)]
                            got = step(s, 3, REV, new, old, 0, _everywhere)
                            gone_av = sum(1 for c in old if c.key in got.retire and c.available)
                            left = n_new_av + n_old_av - gone_av
                            assert gone_av == 0 or left >= 3 - unavail, (surge, unavail, n_new, n_new_av, n_old,
                                                                          n_old_av, got)
                            assert got.target <= 3


# --- Progressing ---------------------------------------------------------------------


@dataclass(frozen=True)
class Prog:
    name: str
    sched: Schedule
    want: tuple[bool, str]
    message: str = ""  # in the message
    available: frozenset[Key] = frozenset()
    strategy: Strategy = ROLLING
    replicas: int = 2
    outdated: int = 0
    retiring: int = 0
    in_flight: bool = False
    absent: list[str] = field(default_factory=list)  # not in the message


TWO = schedule(placements=[placement(0, "a"), placement(1, "b")])
BOTH = frozenset({(0, "a"), (1, "b")})
SHORT = schedule(placements=[placement(0, "a")], unplaced=[unplaced(1, capacity=True, message="0/2 clusters fit")])

PROGRESS = [
    Prog("all updated and available", TWO, (True, C.NEW_REVISION_AVAILABLE),
         f"revision {REV}: 2/2 replicas updated, 2 available", available=BOTH, absent=["older"]),
    Prog("updated, not yet available", TWO, (True, C.REPLICAS_UPDATING), "2/2 replicas updated, 1 available",
         available=frozenset({(0, "a")})),
    Prog("fewer placed than desired", schedule(placements=[placement(0, "a")]), (True, C.REPLICAS_UPDATING),
         "1/2 replicas updated", available=frozenset({(0, "a")})),
    Prog("older revisions left: RollingUpdate", TWO, (True, C.ROLLING_UPDATE), "2 of older revisions left",
         available=BOTH, outdated=2),
    Prog("older revisions left under Recreate: Recreating", schedule(), (True, C.RECREATING),
         "0/2 replicas updated, 0 available, 1 of older revisions left", strategy=Strategy(RECREATE, 0, 2),
         outdated=1),
    Prog("cannot place, for lack of room", SHORT, (False, C.INSUFFICIENT_CAPACITY),
         "1 replica cannot be placed: 0/2 clusters fit", available=frozenset({(0, "a")})),
    Prog("cannot place, nowhere fits: the first one's reason",
         schedule(unplaced=[unplaced(0, message="0/2 fit: taints"), unplaced(1, message="other")]),
         (False, C.UNSCHEDULABLE), "2 replicas cannot be placed: 0/2 fit: taints"),
    Prog("cannot place while old replicas serve: says why it waits", SHORT, (False, C.INSUFFICIENT_CAPACITY),
         "waiting: maxUnavailable 0 keeps the older revision serving: 0/2 clusters fit",
         available=frozenset({(0, "a")}), outdated=2),
    Prog("cannot place under Recreate: no maxUnavailable to blame", SHORT, (False, C.INSUFFICIENT_CAPACITY),
         "1 replica cannot be placed: 0/2", available=frozenset({(0, "a")}), outdated=1,
         strategy=Strategy(RECREATE, 0, 2), absent=["maxUnavailable"]),
    Prog("cannot place yet, but old replicas are being retired", SHORT, (True, C.ROLLING_UPDATE),
         available=frozenset({(0, "a")}), outdated=2, retiring=1),
    Prog("cannot place yet, but a replica is leaving", SHORT, (True, C.REPLICAS_UPDATING),
         available=frozenset({(0, "a")}), in_flight=True),
    Prog("cannot place yet, but a placed replica is on its way", SHORT, (True, C.REPLICAS_UPDATING)),
    Prog("a held replica that is not available is not on its way",
         schedule(placements=[placement(0, "a", state=HELD)], unplaced=[unplaced(1, capacity=True)]),
         (False, C.INSUFFICIENT_CAPACITY)),
    Prog("a kept replica that is not available is on its way",
         schedule(placements=[placement(0, "a", state=KEPT)], unplaced=[unplaced(1, capacity=True)]),
         (True, C.REPLICAS_UPDATING)),
]


@pytest.mark.parametrize("case", PROGRESS, ids=lambda c: c.name)
def test_progress(case: Prog) -> None:
    got = progress(Standing(case.strategy, case.replicas, REV, case.sched, lambda i, cl: (i, cl) in case.available,
                            case.outdated, case.retiring, case.in_flight))
    assert isinstance(got, Progress)
    assert (got.status, got.reason) == case.want, f"-want {case.want}, +got {got}"
    assert case.message in got.message, got.message
    for text in case.absent:
        assert text not in got.message, got.message
