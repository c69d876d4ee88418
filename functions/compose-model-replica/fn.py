"""compose-model-replica: one serving instance on one workload cluster.

Recipe: parse the replica, assemble its remote objects (lib/modelplane/workloads), wrap
each in a provider-kubernetes Object for the replica's cluster, add the team
namespace and the replica route, hold the cluster's provider config with a
Usage per Object until that Object is deleted (deleting the cluster must not
strand them), then report readiness, url, rewritePath and the backend references a
ModelService's route on this cluster uses.

Secrets the pods read (lib/modelplane/workloads/secrets.py) are required by name
in the replica's namespace; each one found is copied to the cluster under a
replica-scoped name and the pod templates read the copies. A workload waits for
its copies (kept as observed when it exists, not yet composed when new); a
missing Secret never holds it: the SecretsFound condition names it and the fix.

What the engines say comes back from the cluster's engine observer through an
Observe-only Object (lib/modelplane/workloads/engine_status.py): status.engines and,
while a workload waits, the Serving condition (EngineFailing with the engine's words).
"""
from modelplane import conditions as C
from modelplane.naming import dns_label
from modelplane.objects import manifest_of, remote_namespace, remote_object, remote_status
from modelplane.pipeline.composition import Composition, is_ready
from modelplane.pipeline.xr import parse
from modelplane.platform import ordering
from modelplane.schemas.model_replica import ModelReplica
from modelplane.workloads import engine_status as ES
from modelplane.workloads import replica as R
from modelplane.workloads import secrets as S
from modelplane.workloads import upgrade as U


def compose(c: Composition) -> None:
    mr = parse(ModelReplica, c.xr)
    provider = mr.spec.cluster.providerConfigName
    labels = R.Replica(c.name, c.namespace, mr.spec.deployment, mr.spec.index, mr.spec.cluster.name,
                       None).labels()

    ns_name = dns_label(c.name, "namespace")
    composed = {ns_name: remote_namespace(ns_name, provider, c.namespace, c.namespace)}
    c.desire(ns_name, composed[ns_name])

    children = R.assemble(mr, c.name, c.namespace)
    uses = S.uses_of(child.manifest for child in children)
    for secret in uses:
        c.require(S.requirement(secret), "v1", "Secret", match_name=secret, namespace=c.namespace)
    found = S.found(uses, {secret: c.required(S.requirement(secret)) for secret in uses})
    copies = {secret: S.copy_name(c.name, secret) for secret in uses}
    for secret, secret_type in found.present.items():
        for key, obj in S.copy_objects(c.name, c.namespace, secret, secret_type, provider, labels).items():
            composed[key] = obj
            c.desire(key, obj)
    copied = {secret for secret in found.present if is_ready(c.observed.get(S.data_name(c.name, secret)))}

    waiting, kept = [], []
    for child in children:
        # Copies first: a workload whose Secrets are not copied yet keeps its observed spec.
        early = S.not_copied(child.manifest, found, copied)
        if early:
            if child.name in c.observed:
                kept.append(c.observed[child.name])
                if child.ready_cel and not R.workload_ready(child, remote_status(c.observed[child.name])):
                    waiting.append(child.manifest["metadata"]["name"])
            else:
                waiting.append(f"{child.manifest['metadata']['name']} (after the copies of Secret(s) "
                               f"{', '.join(early)})")
            continue
        manifest = S.rewrite(child.manifest, copies) if uses else child.manifest
        running = manifest_of(c.observed.get(child.name) or {})
        if U.upgrade_only(manifest, running, copies) and not set(S.uses_of([child.manifest])) & set(found.present):
            manifest = dict(running)   # no restart for an upgrade's own pod changes (workloads/upgrade.py)
        obj = composed[child.name] = remote_object(
            child.name, manifest, provider, namespace=c.namespace, labels=labels,
            readiness="DeriveFromCelQuery" if child.ready_cel else "SuccessfulCreate")
        if child.ready_cel:
            obj["spec"]["readiness"]["celQuery"] = child.ready_cel
            ready = R.workload_ready(child, remote_status(c.observed.get(child.name)))
            if not ready:
                waiting.append(child.manifest["metadata"]["name"])
            c.desire(child.name, obj, ready=ready)
        else:
            c.desire(child.name, obj)

    gateway = mr.spec.cluster.gateway
    route_name = dns_label(c.name, "route")
    if gateway and gateway.name and gateway.namespace:
        manifest = R.route(c.name, c.namespace, {"name": gateway.name, "namespace": gateway.namespace},
                           R.backend_refs(mr, c.name), labels)
        composed[route_name] = remote_object(route_name, manifest, provider, namespace=c.namespace,
                                             labels=labels, readiness="SuccessfulCreate")
        c.desire(route_name, composed[route_name])
    else:
        waiting.append("the cluster gateway (spec.cluster.gateway)")
        c.condition(C.SYNCED_INPUTS, False, C.WAITING_FOR_INPUTS,
                    "spec.cluster.gateway has no name/namespace yet; the replica route waits for it")

    # What the engines say, as the cluster's engine observer reports it: read only (Observe), and
    # never a reason to wait (an absent report is "no engine report yet").
    report = composed[ES.KEY] = remote_object(
        dns_label(c.name, "engine-report"), ES.report_manifest(mr.spec.deployment, mr.spec.index, c.namespace),
        provider, namespace=c.namespace, labels=labels, management_policies=["Observe"])
    c.desire(ES.KEY, report, ready=True)
    engines = ES.read(c.observed.get(ES.KEY))

    # A copy leaves with the last workload that reads it (a kept workload may still read an old one).
    for key in S.unread_copies(c.observed, copies, [manifest_of(o) for o in kept]):
        c.drop(key)

    ordering.hold_provider_configs(c, composed)

    status = {"ready": not waiting, "rewritePath": R.rewrite_path(c.namespace, c.name),
              "backendRefs": R.status_refs(R.backend_refs(mr, c.name))}
    if gateway and gateway.address:
        status["url"] = f"http://{gateway.address}"
    if engines is not None:
        status["engines"] = ES.status_entries(engines)
    c.set_status(**status)
    serving = ES.serving(waiting, engines)
    c.condition(R.SERVING, serving.status, serving.reason, serving.message)
    c.set_ready(not waiting)
    c.condition(S.SECRETS_FOUND, *S.condition(c.namespace, uses, found))
