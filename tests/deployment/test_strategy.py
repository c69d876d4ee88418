"""strategy: spec.strategy and spec.failover resolved to numbers.

Percentages are of spec.replicas: surge rounds up, unavailability down, and
when both come to 0 unavailability becomes 1 so a rollout can move.
failover.after is a duration; "0" (in any spelling that adds up to 0)
disables failover. Bad values name their field.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import pytest
from modelplane.deployment.strategy import (
    RECREATE,
    ROLLING_UPDATE,
    Strategy,
    parse_duration,
    read_failover,
    read_strategy,
    scaled,
)
from modelplane.errors import InputError

SURGE = "spec.strategy.rollingUpdate.maxSurge"
UNAVAILABLE = "spec.strategy.rollingUpdate.maxUnavailable"


# --- scaled: an integer, or a percentage rounded ---------------------------------------


@dataclass(frozen=True)
class Scaled:
    name: str
    value: Any
    want: int
    total: int = 10
    round_up: bool = True


SCALED = [
    Scaled("an integer is taken as is", 3, 3),
    Scaled("an integer is not capped by the total", 30, 30),
    Scaled("zero", 0, 0),
    Scaled("an exact percentage", "50%", 5),
    Scaled("2.5 rounds up for surge", "25%", 3),
    Scaled("2.5 rounds down for unavailability", "25%", 2, round_up=False),
    Scaled("a sliver rounds up to 1", "1%", 1, total=3),
    Scaled("a sliver rounds down to 0", "10%", 0, total=3, round_up=False),
    Scaled("an exact result is not rounded up", "20%", 2, total=10),
    Scaled("an exact result is not rounded down", "30%", 3, total=10, round_up=False),
    Scaled("100% is the total", "100%", 4, total=4, round_up=False),
    Scaled("0% is nothing, even rounded up", "0%", 0),
    Scaled("more than 100% is allowed", "150%", 3, total=2),
    Scaled("surrounding blanks are ignored", " 50% ", 5),
]


@pytest.mark.parametrize("case", SCALED, ids=lambda c: c.name)
def test_scaled(case: Scaled) -> None:
    got = scaled(case.value, case.total, case.round_up, "f")
    assert got == case.want, f"-want {case.want}, +got {got}"


@dataclass(frozen=True)
class Bad:
    name: str
    value: Any
    want: str  # in the message


BAD_SCALED = [
    Bad("a negative integer", -1, "must not be negative (got -1)"),
    Bad("a boolean is not an integer", True, "integer or a percentage"),
    Bad("digits without %", "25", "(got '25')"),
    Bad("a fractional percentage", "2.5%", "(got '2.5%')"),
    Bad("a negative percentage", "-5%", "(got '-5%')"),
    Bad("a word", "half", "(got 'half')"),
    Bad("a fraction", 0.5, "(got 0.5)"),
]


@pytest.mark.parametrize("case", BAD_SCALED, ids=lambda c: c.name)
def test_scaled_rejects(case: Bad) -> None:
    with pytest.raises(InputError) as err:
        scaled(case.value, 10, True, "spec.x")
    assert err.value.field == "spec.x"
    assert case.want in err.value.message, err.value.message


# --- read_strategy ----------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    name: str
    strategy: Any  # spec.strategy; absent when None
    want: Strategy
    replicas: int = 3


def rolling(surge: Any = None, unavailable: Any = None) -> dict:
    ru = {}
    if surge is not None:
        ru["maxSurge"] = surge
    if unavailable is not None:
        ru["maxUnavailable"] = unavailable
    return {"type": ROLLING_UPDATE, "rollingUpdate": ru}


READ = [
    Read("no strategy: RollingUpdate, surge 1, unavailable 0", None, Strategy(ROLLING_UPDATE, 1, 0)),
    Read("an empty strategy is the default", {}, Strategy(ROLLING_UPDATE, 1, 0)),
    Read("RollingUpdate without rollingUpdate is the default", {"type": ROLLING_UPDATE},
         Strategy(ROLLING_UPDATE, 1, 0)),
    Read("integers", rolling(2, 1), Strategy(ROLLING_UPDATE, 2, 1)),
    Read("only surge given: unavailable defaults to 0", rolling(surge=2), Strategy(ROLLING_UPDATE, 2, 0)),
    Read("only unavailable given: surge defaults to 1", rolling(unavailable=2), Strategy(ROLLING_UPDATE, 1, 2)),
    Read("percentages of replicas: surge up, unavailable down", rolling("50%", "50%"),
         Strategy(ROLLING_UPDATE, 2, 1)),
    Read("10% of 3 each: surge 1, unavailable 0", rolling("10%", "10%"), Strategy(ROLLING_UPDATE, 1, 0)),
    Read("both 0 as integers: unavailable becomes 1", rolling(0, 0), Strategy(ROLLING_UPDATE, 0, 1)),
    Read("both round to 0: unavailable becomes 1", rolling("0%", "10%"), Strategy(ROLLING_UPDATE, 0, 1)),
    Read("surge 0 with unavailability left alone", rolling(0, 2), Strategy(ROLLING_UPDATE, 0, 2)),
    Read("percentages follow spec.replicas", rolling("25%", "25%"), Strategy(ROLLING_UPDATE, 3, 2), replicas=10),
    Read("Recreate: no surge, every replica may be unavailable", {"type": RECREATE}, Strategy(RECREATE, 0, 3)),
    Read("Recreate follows spec.replicas", {"type": RECREATE}, Strategy(RECREATE, 0, 7), replicas=7),
]


@pytest.mark.parametrize("case", READ, ids=lambda c: c.name)
def test_read_strategy(case: Read) -> None:
    spec = {} if case.strategy is None else {"strategy": case.strategy}
    got = read_strategy(spec, case.replicas)
    assert got == case.want, f"-want {case.want}, +got {got}"


@dataclass(frozen=True)
class ReadBad:
    name: str
    strategy: dict
    field: str


READ_BAD = [
    ReadBad("an unknown type", {"type": "BlueGreen"}, "spec.strategy.type"),
    ReadBad("a bad maxSurge", rolling(surge="lots"), SURGE),
    ReadBad("a negative maxSurge", rolling(surge=-1), SURGE),
    ReadBad("a bad maxUnavailable", rolling(unavailable="25"), UNAVAILABLE),
    ReadBad("a negative maxUnavailable", rolling(unavailable=-2), UNAVAILABLE),
]


@pytest.mark.parametrize("case", READ_BAD, ids=lambda c: c.name)
def test_read_strategy_names_the_bad_field(case: ReadBad) -> None:
    with pytest.raises(InputError) as err:
        read_strategy({"strategy": case.strategy}, 3)
    assert err.value.field == case.field


# --- durations and failover -----------------------------------------------------------


@dataclass(frozen=True)
class Duration:
    name: str
    text: str
    want: float  # seconds


DURATIONS = [
    Duration("minutes", "5m", 300),
    Duration("seconds", "90s", 90),
    Duration("hours", "2h", 7200),
    Duration("hours and minutes", "1h30m", 5400),
    Duration("all three", "1h2m3s", 3723),
    Duration("minutes and seconds", "1m30s", 90),
    Duration("zero", "0", 0),
    Duration("zero with a unit", "0s", 0),
    Duration("more than 60 of a unit", "90m", 5400),
    Duration("surrounding blanks", " 5m ", 300),
]


@pytest.mark.parametrize("case", DURATIONS, ids=lambda c: c.name)
def test_parse_duration(case: Duration) -> None:
    got = parse_duration(case.text, "f").total_seconds()
    assert got == case.want, f"-want {case.want}, +got {got}"


@pytest.mark.parametrize("text", ["", "5", "5min", "5M", "-5m", "30s1m", "1.5h", "soon", "m"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(InputError) as err:
        parse_duration(text, "spec.x")
    assert err.value.field == "spec.x"
    assert repr(text) in err.value.message


@dataclass(frozen=True)
class Failover:
    name: str
    spec: dict
    want: datetime.timedelta | None


FAILOVER = [
    Failover("no failover: 5 minutes", {}, datetime.timedelta(minutes=5)),
    Failover("failover without after: 5 minutes", {"failover": {}}, datetime.timedelta(minutes=5)),
    Failover("a null failover: 5 minutes", {"failover": None}, datetime.timedelta(minutes=5)),
    Failover("a duration", {"failover": {"after": "90s"}}, datetime.timedelta(seconds=90)),
    Failover("0 disables failover", {"failover": {"after": "0"}}, None),
    Failover("0s disables failover too", {"failover": {"after": "0s"}}, None),
    Failover("0h0m0s disables failover too", {"failover": {"after": "0h0m0s"}}, None),
]


@pytest.mark.parametrize("case", FAILOVER, ids=lambda c: c.name)
def test_read_failover(case: Failover) -> None:
    got = read_failover(case.spec)
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_read_failover_names_its_field() -> None:
    with pytest.raises(InputError) as err:
        read_failover({"failover": {"after": "five minutes"}})
    assert err.value.field == "spec.failover.after"
