"""The observer's loop: list engine pods, write each replica's report when it changed.

Every ``interval`` seconds one LIST of engine pods across the cluster (a label
selector, so the answer holds only Modelplane's engine pods), then per replica a
GET of its ConfigMap and a create or update only when what it says changed. A
periodic list rather than a watch: nothing to miss or resume after a restart or
a dropped connection, and the load is bounded (one list per interval); the
report reaches the control plane at provider-kubernetes' poll of the Observe
Object anyway, which is slower than the interval.

Nothing stops the loop but ``stop``: a failed list waits with exponential
backoff (``interval`` doubling up to ``max_backoff``); a failed write is logged
and retried at the next pass. What was written is remembered, so an unchanged
report costs no call; the memory is dropped every ``full_every`` passes, so a
report deleted by hand comes back.
"""
from __future__ import annotations

import http.client
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelplane.kube.client import ApiError

from .report import POD_SELECTOR, Report, differs, reports, updated

log = logging.getLogger("modelplane.engine-observer")

# What a call to the API server may raise besides our bugs (ValueError: an answer that is not JSON).
NETWORK_ERRORS = (ApiError, OSError, http.client.HTTPException, ValueError)


@dataclass(frozen=True)
class Settings:
    interval: float = 10.0
    max_backoff: float = 120.0
    full_every: int = 30


@dataclass
class Pass:
    """What one pass did (for logs and tests)."""

    listed: int = 0
    written: list[str] = field(default_factory=list)   # namespace/name
    failed: list[str] = field(default_factory=list)    # namespace/name: error


class Observer:
    """Runs passes against ``client`` (a ``kube.Client``) until ``stop`` is set."""

    def __init__(self, client: Any, settings: Settings = Settings(),
                 stop: threading.Event | None = None) -> None:
        self.client = client
        self.settings = settings
        self.stop = stop or threading.Event()
        self._written: dict[tuple[str, str], dict[str, str]] = {}
        self._passes = 0

    def once(self) -> Pass:
        """One pass; raises only when the pods cannot be listed (the loop backs off)."""
        self._passes += 1
        if self._passes % self.settings.full_every == 0:
            self._written.clear()
        listing = self.client.request("GET", "/api/v1/pods", query={"labelSelector": POD_SELECTOR})
        pods = listing.get("items") or []
        out = Pass(listed=len(pods))
        for report in reports(pods):
            where = f"{report.namespace}/{report.name}"
            try:
                if self._write(report):
                    out.written.append(where)
            except NETWORK_ERRORS as err:
                out.failed.append(f"{where}: {err}")
                self._written.pop((report.namespace, report.name), None)
        return out

    def _write(self, report: Report) -> bool:
        key = (report.namespace, report.name)
        if self._written.get(key) == _fingerprint(report):
            return False
        path = f"/api/v1/namespaces/{report.namespace}/configmaps"
        try:
            current = self.client.request("GET", f"{path}/{report.name}")
        except ApiError as err:
            if err.code != 404:
                raise
            self.client.request("POST", path, report.manifest())
            self._written[key] = _fingerprint(report)
            return True
        if not differs(current, report):
            self._written[key] = _fingerprint(report)
            return False
        # PUT with the resourceVersion just read: a concurrent writer makes it 409, retried next pass.
        self.client.request("PUT", f"{path}/{report.name}", updated(current, report))
        self._written[key] = _fingerprint(report)
        return True

    def run(self, on_pass: Callable[[Pass], None] | None = None) -> None:
        """Passes every ``interval`` until ``stop`` is set; never raises for the API's errors."""
        delay = self.settings.interval
        while not self.stop.is_set():
            try:
                result = self.once()
            except NETWORK_ERRORS as err:
                delay = min(max(delay, self.settings.interval) * 2, self.settings.max_backoff)
                log.warning("cannot list engine pods: %s; next try in %.0f s", err, delay)
            else:
                delay = self.settings.interval
                for where in result.written:
                    log.info("wrote %s", where)
                for failure in result.failed:
                    log.warning("cannot write %s; next pass tries again", failure)
                if on_pass:
                    on_pass(result)
            self.stop.wait(delay)


def _fingerprint(report: Report) -> dict[str, str]:
    return {**report.data(), "owners": ",".join(sorted(f"{o.name}/{o.uid}" for o in report.owners))}
