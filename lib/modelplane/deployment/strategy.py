"""``spec.strategy`` and ``spec.failover``, read and resolved to numbers.

Strategy is shaped like a Deployment's: ``type: RollingUpdate | Recreate``
and ``rollingUpdate: {maxSurge, maxUnavailable}``, each an integer or a
percentage of ``spec.replicas``. As in Kubernetes, a percentage of surge
rounds up and one of unavailability rounds down, and when both resolve to
0 (say 10% of 3) unavailability becomes 1 so a rollout can always move.

``failover.after`` is a duration ("5m", "90s", "1h30m"); "0" disables
failover.
"""
from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.errors import InputError

ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
DEFAULT_SURGE = 1
DEFAULT_UNAVAILABLE = 0
DEFAULT_FAILOVER = "5m"
DEFAULT_DRAIN = "60s"

_PERCENT = re.compile(r"^(\d+)%$")
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


@dataclass(frozen=True)
class Strategy:
    type: str = ROLLING_UPDATE
    max_surge: int = DEFAULT_SURGE
    max_unavailable: int = DEFAULT_UNAVAILABLE


def scaled(value: int | str, total: int, round_up: bool, field: str) -> int:
    """An integer, or a percentage of ``total`` rounded up or down."""
    if isinstance(value, bool):
        raise InputError(field, "must be an integer or a percentage such as 25%")
    if isinstance(value, int):
        if value < 0:
            raise InputError(field, f"must not be negative (got {value}); use 0 or more, or a percentage such as 25%")
        return value
    m = _PERCENT.match(str(value).strip())
    if not m:
        raise InputError(field, f"must be an integer or a percentage such as 25% (got {value!r})")
    exact = int(m.group(1)) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def read_strategy(spec: Mapping[str, Any], replicas: int) -> Strategy:
    raw = spec.get("strategy") or {}
    kind = raw.get("type") or ROLLING_UPDATE
    if kind not in (ROLLING_UPDATE, RECREATE):
        raise InputError("spec.strategy.type", f"must be RollingUpdate or Recreate (got {kind!r})")
    if kind == RECREATE:
        return Strategy(RECREATE, 0, replicas)
    rolling = raw.get("rollingUpdate") or {}
    surge = scaled(rolling.get("maxSurge", DEFAULT_SURGE), replicas, True, "spec.strategy.rollingUpdate.maxSurge")
    unavailable = scaled(rolling.get("maxUnavailable", DEFAULT_UNAVAILABLE), replicas, False,
                         "spec.strategy.rollingUpdate.maxUnavailable")
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return Strategy(ROLLING_UPDATE, surge, unavailable)


def parse_duration(text: str, field: str) -> datetime.timedelta:
    """"5m", "90s", "1h30m", "0" -> a timedelta."""
    s = str(text).strip()
    if s == "0":
        return datetime.timedelta(0)
    m = _DURATION.match(s)
    if not s or not m:
        raise InputError(field, f"must be a duration such as 5m, 90s or 1h30m, or 0 to disable (got {text!r})")
    h, mins, secs = (int(g) if g else 0 for g in m.groups())
    return datetime.timedelta(hours=h, minutes=mins, seconds=secs)


def read_failover(spec: Mapping[str, Any]) -> datetime.timedelta | None:
    """How long a cluster may be down before its replicas are replaced; None: never."""
    after = parse_duration((spec.get("failover") or {}).get("after", DEFAULT_FAILOVER), "spec.failover.after")
    return after if after > datetime.timedelta(0) else None


def read_drain(spec: Mapping[str, Any]) -> datetime.timedelta:
    """How long a replica out of every route keeps serving before it is deleted."""
    return parse_duration((spec.get("drain") or {}).get("period", DEFAULT_DRAIN), "spec.drain.period")
