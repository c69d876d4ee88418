"""compose-model-deployment: schedule a ModelDeployment onto the fleet.

Recipe: read and check the deployment; require its clusters, the classes and
its cache; wait (keeping every child) until all are fetched; read its own
children; schedule; drain what goes (out of routing, deleted on a later
call); compose one ModelReplica and one ModelEndpoint per placed replica and
report replicas, placements, removals and the Scheduled condition
(lib/deployment).
"""
from modelplane import conditions as C
from modelplane.deployment import drain, inputs, observed, status
from modelplane.deployment.compose import children
from modelplane.deployment.validate import check_selectors
from modelplane.function import Composition
from modelplane.scheduler import Fleet, schedule
from modelplane.schemas.model_deployment import ModelDeployment
from modelplane.xr import parse


def compose(c: Composition) -> None:
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
    own = observed.read(c.observed)
    live = own.live(dep.namespace)
    structs = c.required_structs(inputs.CLUSTERS)
    clusters, infos = inputs.read_clusters(structs, dep.key, live)
    classes, warnings = inputs.read_classes(c.required(inputs.CLASSES))
    cache = inputs.read_cache(dep.cache, c.required(inputs.CACHE)) if dep.cache else None
    for w in warnings:
        c.warning(w)
    fleet = Fleet(clusters=clusters, classes=classes, cache_ready=cache.ready if cache else None,
                  terminating=inputs.Terminating(structs, dep.key, live))
    sched = schedule(dep, fleet, [k.current(extra=bool(k.draining)) for k in own.replicas])
    leaving = drain.removals(own.replicas, sched)

    kids = children(dep, c.spec, (c.xr.get("metadata") or {}).get("labels"), sched, infos, cache, c.observed,
                    own, leaving)
    for name, (obj, ready) in kids.desired.items():
        c.desire(name, obj, ready=ready)
    for name in kids.drop:
        c.drop(name)

    fields = status.fields(dep.name, dep.replicas, sched, c.observed, leaving)
    c.set_status(**fields)
    verdict = status.scheduled(sched)
    message = verdict.message
    if cache is not None and not cache.found:
        message = f"ModelCache {dep.cache} not found in namespace {dep.namespace}; {message}"
    c.condition(C.SCHEDULED, verdict.status, verdict.reason, message)
    c.set_ready(status.ready(fields))
