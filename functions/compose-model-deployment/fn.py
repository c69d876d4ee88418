"""compose-model-deployment: schedule a ModelDeployment onto the fleet.

Recipe: read and check the deployment; require its clusters, the classes and
its cache; wait (keeping every child) until all are fetched; read its own
children; find clusters down long enough to fail over; take one rollout
step; schedule the current revision; drain what goes (out of routing, kept
until every ModelService route is observed without it and spec.drain.period
has passed, then deleted); compose one ModelReplica and one ModelEndpoint per
placed replica; report replicas, placements, removals and the Scheduled and
Progressing conditions; ask to be called again when a time-based decision
is due, or else say the answer holds whatever the time, so the server may
give it again for the same request, unless a selector was rejected for the
moment (CEL's CPU deadline) while scheduling (lib/modelplane/deployment).
"""
import dataclasses

from modelplane import cel
from modelplane import conditions as C
from modelplane.deployment import drain, inputs, observed, rollout, status
from modelplane.deployment.compose import Decided, Seen, Template, children
from modelplane.deployment.plan import plan
from modelplane.deployment.revision import revision
from modelplane.deployment.strategy import read_drain, read_failover, read_strategy
from modelplane.deployment.validate import check_selectors
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.xr import parse
from modelplane.scheduler import Fleet, schedule
from modelplane.schemas.model_deployment import ModelDeployment

# While a replica drains, come back soon even if no watch event arrives.
DRAIN_RECHECK_SECONDS = 10


def compose(c: Composition) -> None:
    transient = cel.transient_rejections()
    md = parse(ModelDeployment, c.xr)
    check_selectors(md)
    inputs.require(c, md)

    missing = inputs.not_fetched(c, md)
    if missing:
        # Nothing lost: the runtime seeded every child; keep last status too.
        previous = c.xr.get("status") or {}
        c.set_status(**{k: previous[k] for k in status.FIELDS if k in previous})
        c.condition(C.SCHEDULED, "Unknown", C.WAITING_FOR_INPUTS, f"waiting for {', '.join(missing)} to be fetched")
        c.set_ready(status.ready(previous))
        return

    dep = inputs.deployment(md, c.xr)
    rev = revision(c.spec)
    strategy = read_strategy(c.spec, dep.replicas)
    after = read_failover(c.spec)
    now = c.now()
    own = observed.read(c.observed)
    live = own.live(dep.namespace)
    clusters, infos, terminating = inputs.read_clusters(c.required_wire(inputs.CLUSTERS) or [], dep.key, live)
    classes, warnings = inputs.read_classes(c.required(inputs.CLASSES))
    cache = inputs.read_cache(dep.cache, c.required(inputs.CACHE)) if dep.cache else None
    for w in warnings:
        c.warning(w)

    # Failover and the rollout step decide which observed replicas count.
    p = plan(own.replicas, infos.clusters, infos.since, rev, strategy, dep.replicas, after, now)

    fleet = Fleet(clusters=clusters, classes=classes, cache_ready=cache.ready if cache else None,
                  terminating=terminating)
    sched = schedule(dataclasses.replace(dep, replicas=p.step.target), fleet, p.current)
    routes = drain.Drain(inputs.read_routed_items(c.required_wire(inputs.SERVICES), dep.namespace), now, read_drain(c.spec))
    leaving = drain.removals(own.replicas, sched, p.step.retire, routes)

    meta = c.xr.get("metadata") or {}
    kids = children(Template(dep, c.spec, meta.get("labels"), cache=cache, revision=rev),
                    Seen(c.observed, own, infos, down=infos.down),
                    Decided(sched, removals=leaving, replaced=p.replaced))
    for name, (obj, ready) in kids.desired.items():
        c.desire(name, obj, ready=ready)
    for name in kids.drop:
        c.drop(name)

    by_key = {k.key: k for k in own.replicas}
    fields = status.fields(status.Report(dep.name, dep.replicas, sched, c.observed, children=by_key,
                                         leaving=leaving, revision=rev, generation=meta.get("generation")))
    c.set_status(**fields)
    verdict = status.scheduled(sched)
    message = verdict.message
    if cache is not None and not cache.found:
        message = f"ModelCache {dep.cache} not found in namespace {dep.namespace}; {message}"
    c.condition(C.SCHEDULED, verdict.status, verdict.reason, message)
    deleted = {r.child.key for r in leaving if r.phase == drain.DELETING}
    progress = rollout.progress(rollout.Standing(
        strategy, dep.replicas, rev, sched,
        available=lambda i, cl: (k := by_key.get((i, cl))) is not None and k.available,
        outdated=len(p.outdated - deleted), retiring=len(p.step.retire), in_flight=bool(leaving)))
    c.condition(C.PROGRESSING, progress.status, progress.reason, progress.message)
    c.set_ready(status.ready(fields))

    waits = [p.wake] if p.wake is not None else []
    for r in leaving:
        if r.carried:
            waits.append(DRAIN_RECHECK_SECONDS)
        elif r.wait is not None:
            waits.append(max(1.0, min(float(DRAIN_RECHECK_SECONDS), r.wait)))
    if waits:
        c.requeue_after(min(waits))
    elif not leaving and cel.transient_rejections() == transient:
        # The clock decided nothing: failover has nothing pending (a cluster that failed over
        # stays failed) and no replica drains. The same request later gets this same answer,
        # unless a selector hit CEL's CPU deadline on this busy moment: then the next call must
        # evaluate again, not be given this answer.
        c.cacheable()
