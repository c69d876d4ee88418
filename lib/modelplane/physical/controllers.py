"""Workload controllers of a simulated cluster: pods for each workload, statuses from the pods.

- ``Deployment``: ``spec.replicas`` pods of the template's revision. A new
  revision rolls like the Deployment controller does (``RollingUpdate`` with
  ``maxSurge``/``maxUnavailable``, default 25%/25%; or ``Recreate``): new pods
  are added within the surge, old ones removed while enough stay available.
  Pods that never bound are removed first.
- ``LeaderWorkerSet``: ``spec.replicas`` groups of ``size`` pods (leader +
  workers), each group a gang; a new revision recreates the groups.
- ``Job``: up to ``parallelism`` pods until ``completions`` succeeded; a pod
  that was bound has run, and completes (releasing its node and devices).
- ``StatefulSet``: ordinal pods, recreated on a new revision.

"Available" here means every pod the workload wants is bound and started (a
pod whose Secret its cluster lacks is bound but held: ``kubelet``): a Deployment
or LeaderWorkerSet reports ``availableReplicas``/``readyReplicas`` = such
pods (groups), and the readiness queries Modelplane composes compare those
with ``spec.replicas``. Statuses follow the upstream schemas (apps/v1,
batch/v1, leaderworkerset.x-k8s.io/v1); condition times are the simulated
clock at the last transition.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.physical.kubesched import Pod

KINDS = ("Deployment", "LeaderWorkerSet", "Job", "StatefulSet")
PROGRESS_DEADLINE = 600

Seq = Callable[[], int]


def revision(template: Any) -> str:
    """A short hash of a pod template, like pod-template-hash."""
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]


@dataclass
class Workload:
    kind: str
    namespace: str
    name: str
    manifest: dict
    seq: int                                  # creation order on the cluster
    generation: int = 1
    pods: list[Pod] = field(default_factory=list)
    made: int = 0                             # pods ever created (names stay unique)
    succeeded: int = 0                        # Job
    started: str = ""                         # Job startTime
    completed: str = ""                       # Job completionTime
    conditions: dict[str, dict] = field(default_factory=dict)
    progress_since: str = ""                  # Deployment: when the current rollout began

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.manifest.get("spec") or {}

    def update(self, manifest: dict) -> bool:
        """Take a new manifest; True when its spec changed (a new generation)."""
        changed = (manifest.get("spec") or {}) != self.spec
        self.manifest = manifest
        if changed:
            self.generation += 1
        return changed

    # ----- pods ----------------------------------------------------------------
    def _pod(self, template: Mapping[str, Any], rev: str, index: int, seq: Seq, name: str = "",
             gang: str | None = None) -> Pod:
        self.made += 1
        pod = Pod(name=name or f"{self.name}-{rev}-{self.made:05d}", namespace=self.namespace,
                  spec=template.get("spec") or {}, seq=(seq(),), gang=gang, rev=rev, index=index)
        self.pods.append(pod)
        return pod

    def _remove(self, pods: list[Pod]) -> None:
        gone = {id(p) for p in pods}
        self.pods = [p for p in self.pods if id(p) not in gone]

    def reconcile(self, seq: Seq, now: str) -> bool:
        """One controller pass; True when pods were created, removed or completed."""
        before = [(id(p), p.done) for p in self.pods]
        if self.kind == "Deployment":
            self._deployment(seq, now)
        elif self.kind == "LeaderWorkerSet":
            self._lws(seq)
        elif self.kind == "Job":
            self._job(seq, now)
        elif self.kind == "StatefulSet":
            self._statefulset(seq)
        return before != [(id(p), p.done) for p in self.pods]

    def _replicas(self) -> int:
        n = self.spec.get("replicas")
        return 1 if n is None else int(n)

    def _deployment(self, seq: Seq, now: str) -> None:
        template = self.spec.get("template") or {}
        rev, n = revision(template), self._replicas()
        new = [p for p in self.pods if p.rev == rev]
        old = [p for p in self.pods if p.rev != rev]
        strategy = self.spec.get("strategy") or {}
        if strategy.get("type") == "Recreate":
            if old:
                self._remove(old)
                return  # new pods come once the old ones are gone
            surge, unavailable = 0, n
        else:
            rolling = strategy.get("rollingUpdate") or {}
            surge = _scaled(rolling.get("maxSurge", "25%"), n, up=True)
            unavailable = _scaled(rolling.get("maxUnavailable", "25%"), n, up=False)
            if surge == 0 and unavailable == 0:
                unavailable = 1  # the API server refuses both zero; the controller would never move
        # Old pods that never bound serve nothing: they go first.
        self._remove([p for p in old if not p.bound])
        old = [p for p in old if p.bound]
        if len(new) > n:
            # Scale down: pods that never bound first, then the newest.
            keep = sorted(new, key=lambda p: (not p.bound, p.seq), reverse=True)[len(new) - n:]
            self._remove([p for p in new if p not in keep])
            new = [p for p in new if p in keep]
        room = min(n - len(new), n + surge - len(new) - len(old))
        for _ in range(max(room, 0)):
            new.append(self._pod(template, rev, len(new), seq))
        unbound_new = sum(1 for p in new if not p.ready)
        can_remove = len(new) + len(old) - (n - unavailable) - unbound_new
        if old and can_remove > 0:
            self._remove(sorted(old, key=lambda p: p.seq, reverse=True)[:can_remove])
        complete = len(self.pods) == n == len(new) and all(p.ready for p in new)
        self.progress_since = "" if complete else (self.progress_since or now)

    def _lws(self, seq: Seq) -> None:
        tmpl = self.spec.get("leaderWorkerTemplate") or {}
        rev = revision(tmpl)
        size = int(tmpl.get("size") or 1)
        worker = tmpl.get("workerTemplate") or {}
        leader = tmpl.get("leaderTemplate") or worker
        n = self._replicas()
        self._remove([p for p in self.pods if p.rev != rev or p.index >= n])
        for g in range(n):
            if any(p.index == g for p in self.pods):
                continue
            gang = f"{self.namespace}/{self.name}/{g}"
            self._pod(leader, rev, g, seq, name=f"{self.name}-{g}", gang=gang)
            for w in range(1, size):
                self._pod(worker, rev, g, seq, name=f"{self.name}-{g}-{w}", gang=gang)

    def _job(self, seq: Seq, now: str) -> None:
        completions = int(self.spec.get("completions") or 1)
        parallelism = int(self.spec.get("parallelism") or 1)
        for pod in self.pods:
            if pod.ready and not pod.done:
                # Bound and started means it ran: the simulated workload finishes at once and frees its node.
                pod.done = True
                self.succeeded += 1
        active = [p for p in self.pods if not p.done]
        template = self.spec.get("template") or {}
        while len(active) < parallelism and self.succeeded + len(active) < completions:
            active.append(self._pod(template, revision(template), self.made, seq))
            self.started = self.started or now
        if self.succeeded >= completions and not self.completed:
            self.completed = now

    def _statefulset(self, seq: Seq) -> None:
        template = self.spec.get("template") or {}
        rev, n = revision(template), self._replicas()
        self._remove([p for p in self.pods if p.rev != rev or p.index >= n])
        for i in range(n):
            if not any(p.index == i for p in self.pods):
                self._pod(template, rev, i, seq, name=f"{self.name}-{i}")

    # ----- status -----------------------------------------------------------------
    def _condition(self, typ: str, status: str, reason: str, message: str, now: str, update_time: bool) -> dict:
        prev = self.conditions.get(typ)
        same = prev is not None and prev["status"] == status
        cond = {"type": typ, "status": status}
        if update_time:
            cond["lastUpdateTime"] = prev["lastUpdateTime"] if same and prev["reason"] == reason else now
        cond["lastTransitionTime"] = prev["lastTransitionTime"] if same else now
        cond.update(reason=reason, message=message)
        self.conditions[typ] = cond
        return dict(cond)

    def status(self, now: str) -> dict:
        if self.kind == "Deployment":
            return self._deployment_status(now)
        if self.kind == "LeaderWorkerSet":
            return self._lws_status(now)
        if self.kind == "Job":
            return self._job_status(now)
        return self._statefulset_status()

    def _deployment_status(self, now: str) -> dict:
        n = self._replicas()
        rev = revision(self.spec.get("template") or {})
        bound = sum(1 for p in self.pods if p.ready)
        updated = sum(1 for p in self.pods if p.rev == rev)
        rs = f'ReplicaSet "{self.name}-{rev}"'
        out: dict[str, Any] = {"observedGeneration": self.generation}
        for key, value in (("replicas", len(self.pods)), ("updatedReplicas", updated), ("readyReplicas", bound),
                           ("availableReplicas", bound), ("unavailableReplicas", max(n - bound, 0))):
            if value:
                out[key] = value
        complete = updated == n and bound >= n and len(self.pods) == n
        available = bound >= n
        conds = [self._condition(
            "Available", "True" if available else "False",
            "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
            "Deployment has minimum availability." if available else "Deployment does not have minimum availability.",
            now, True)]
        if complete:
            conds.append(self._condition("Progressing", "True", "NewReplicaSetAvailable",
                                         f"{rs} has successfully progressed.", now, True))
        elif self.progress_since and _seconds(now) - _seconds(self.progress_since) > PROGRESS_DEADLINE:
            conds.append(self._condition("Progressing", "False", "ProgressDeadlineExceeded",
                                         f"{rs} has timed out progressing.", now, True))
        else:
            conds.append(self._condition("Progressing", "True", "ReplicaSetUpdated", f"{rs} is progressing.", now, True))
        out["conditions"] = conds
        return out

    def _lws_status(self, now: str) -> dict:
        n = self._replicas()
        rev = revision(self.spec.get("leaderWorkerTemplate") or {})
        groups: dict[int, list[Pod]] = {}
        for p in self.pods:
            groups.setdefault(p.index, []).append(p)
        ready = sum(1 for ps in groups.values() if all(p.ready for p in ps))
        updated = sum(1 for ps in groups.values() if all(p.rev == rev for p in ps))
        out: dict[str, Any] = {"replicas": len(groups)}
        if ready:
            out["readyReplicas"] = ready
        if updated:
            out["updatedReplicas"] = updated
        if ready >= n:
            conds = [self._condition("Available", "True", "AllGroupsReady", "All replicas are ready", now, False),
                     self._condition("Progressing", "False", "Ready", "Replicas are ready", now, False)]
        else:
            conds = [self._condition("Available", "False", "AllGroupsReady", f"{ready}/{n} groups are ready", now, False),
                     self._condition("Progressing", "True", "GroupsProgressing", "Replicas are progressing", now, False)]
        out["conditions"] = conds
        return out

    def _job_status(self, now: str) -> dict:
        completions = int(self.spec.get("completions") or 1)
        out: dict[str, Any] = {}
        if self.started:
            out["startTime"] = self.started
        active = sum(1 for p in self.pods if not p.done)
        if active:
            out["active"] = active
        out["ready"] = 0
        if self.succeeded:
            out["succeeded"] = self.succeeded
        if self.succeeded >= completions:
            out["completionTime"] = self.completed
            message = "Reached expected number of succeeded pods"
            out["conditions"] = [
                {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": message,
                 "lastProbeTime": self.completed, "lastTransitionTime": self.completed},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": message,
                 "lastProbeTime": self.completed, "lastTransitionTime": self.completed},
            ]
        return out

    def _statefulset_status(self) -> dict:
        rev = revision(self.spec.get("template") or {})
        bound = sum(1 for p in self.pods if p.ready)
        out: dict[str, Any] = {"observedGeneration": self.generation, "replicas": len(self.pods),
                               "currentRevision": f"{self.name}-{rev}", "updateRevision": f"{self.name}-{rev}"}
        for key in ("readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas"):
            value = bound if key in ("readyReplicas", "availableReplicas") else len(self.pods)
            if value:
                out[key] = value
        return out


def _scaled(value: Any, n: int, up: bool) -> int:
    """An IntOrString of ``n`` (a percentage rounds up for surge, down for unavailable)."""
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * n / 100
        return math.ceil(exact) if up else math.floor(exact)
    return int(value)


def _seconds(stamp: str) -> int:
    """Seconds of a ``YYYY-MM-DDTHH:MM:SSZ`` stamp (only differences are used)."""
    import datetime

    return int(datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC).timestamp())
