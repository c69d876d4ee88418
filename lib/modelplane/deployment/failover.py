"""Failover: replicas on a cluster down too long are replaced elsewhere.

A cluster is *down* while it is listed but not Ready, or has not published
its pools. It has been down since its Ready condition's
``lastTransitionTime`` (without a Ready condition: since it was created).
Once down for ``spec.failover.after`` or longer, it has *failed*: its
replicas become extra replicas (held: kept untouched, annotated
``modelplane.ai/replaced: <since>``) and the scheduler places replacements
wherever there is room, so the replacements come first (surge). A failed
cluster that comes back makes its replicas count again: the surplus is
removed by the scheduler's scale-down, the replicas that failover replaced
first, the oldest outage first. A cluster that is deleted evicts its
replicas like any other cause.

Time comes from the caller (``Composition.now``: the pipeline context's
``modelplane.ai/now`` when a simulator sets it, else the wall clock). While
a cluster hosting replicas is down but has not failed yet, ``wake_in`` says
how long until it would, so the function asks to be called again then
(the response TTL) rather than waiting for an unrelated event.
"""
from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from modelplane.pipeline.composition import parse_time
from modelplane.scheduler import Cluster


@dataclass(frozen=True)
class Outage:
    cluster: str
    since: str  # RFC 3339, as observed ("" when unknown: never fails)
    failed: bool


def outages(clusters: Mapping[str, Cluster], since_of: Callable[[str], str], hosting: set[str],
            after: datetime.timedelta | None, now: datetime.datetime) -> dict[str, Outage]:
    """The down clusters among those ``hosting`` replicas, by name (a fleet's clusters by name:
    only the few hosting replicas are looked at)."""
    out = {}
    for name in sorted(hosting):
        c = clusters.get(name)
        if c is None or (c.ready and c.pools is not None):
            continue
        since = since_of(c.name)
        start = parse_time(since) if since else None
        failed = after is not None and start is not None and now - start >= after
        out[c.name] = Outage(c.name, since, failed)
    return out


def wake_in(down: Iterable[Outage], after: datetime.timedelta | None, now: datetime.datetime) -> float | None:
    """Seconds until the next down cluster fails over; None when none will."""
    if after is None:
        return None
    waits = []
    for o in down:
        start = parse_time(o.since) if o.since else None
        if not o.failed and start is not None:
            waits.append((start + after - now).total_seconds())
    return max(min(waits), 1.0) if waits else None
