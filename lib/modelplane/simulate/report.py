"""What ``modelplane simulate`` prints: placements, conditions, capacity, resources.

Each view is a pure function of the world (capacity: of the physical
clusters), so tests compare lines.
"""
from __future__ import annotations

from collections.abc import Callable

from modelplane import conditions as C
from modelplane.physical.simulated import Physical
from modelplane.render import yamlout
from modelplane.simulate.world import World, label


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*headers).rstrip()] + [fmt.format(*r).rstrip() for r in rows]


def _replica(world: World, namespace: str, name: str) -> dict:
    state = world.xrs.get(("ModelReplica", namespace, name))
    return state.obj if state else {}


def _endpoint_url(world: World, namespace: str, name: str) -> str:
    state = world.xrs.get(("ModelEndpoint", namespace, name))
    if not state:
        return "-"
    spec = state.obj.get("spec") or {}
    url = spec.get("url", "")
    if not url:
        return "-"
    # An in-fleet replica answers on its cluster gateway under its own prefix (its replica route);
    # ModelServices reach it by their own route there instead.
    replica = (_replica(world, namespace, (spec.get("replica") or {}).get("name", "")).get("status") or {})
    return url.rstrip("/") + (replica.get("rewritePath") or spec.get("rewritePath") or "/")


def _devices(replica: dict) -> str:
    parts = []
    for engine in (replica.get("spec") or {}).get("engines") or []:
        copies = engine.get("copies", 1)
        for member in engine.get("members") or []:
            pods = member.get("nodes", 1) * copies
            for dev in member.get("devices") or []:
                claim = "" if dev.get("claim", "DRA") == "DRA" else " (synthetic)"
                parts.append(f"{pods}x{dev.get('count', 1)} {dev.get('name')}{claim}")
    return ", ".join(parts) or "-"


def placements(world: World) -> list[str]:
    """One row per replica of every ModelDeployment; unplaced ones with their reason."""
    rows: list[list[str]] = []
    notes: list[str] = []
    for key in world.ordered():
        kind, ns, name = key
        if kind != "ModelDeployment":
            continue
        obj = world.xrs[key].obj
        status = obj.get("status") or {}
        desired = (obj.get("spec") or {}).get("replicas", 1)
        placed = sorted(status.get("placements") or [], key=lambda p: (p.get("index") is None, p.get("index") or 0))
        # Indexes are stable, not dense: after a failover or a rollout the live ones have gaps,
        # so a row is a replica that exists, and the replicas still missing come after them.
        missing = max(desired - len(placed), 0)
        for p in [*placed, *[None] * missing]:
            if not p:
                rows.append([f"{ns}/{name}", "-", "-", "-", "-", "unplaced"])
                continue
            index = p.get("index")
            replica = _replica(world, ns, p.get("name", ""))
            pools = ", ".join(
                f"{m.get('engine')}/{m.get('role')}={m.get('pool')}" for m in p.get("members") or []
            )
            rows.append([
                f"{ns}/{name}", str(index), p.get("cluster", "-"), pools or "-", _devices(replica),
                _endpoint_url(world, ns, p.get("name", "")),
            ])
        scheduled = _condition(obj, "Scheduled")
        if scheduled and scheduled.get("status") != "True":
            notes.append(f"{ns}/{name}: {scheduled.get('message', '')}")
    lines = _table(["DEPLOYMENT", "REPLICA", "CLUSTER", "POOLS", "DEVICES", "ENDPOINT"], rows)
    return lines + [f"  {n}" for n in notes]


def capacity(physical: Physical) -> list[str]:
    """Devices used / total per cluster and pool, then every Pending pod with its reason."""
    rows = []
    pending = []
    for name, cluster in sorted(physical.clusters.items()):
        for use in cluster.capacity():
            rows.append([name, use.pool, f"{use.used}/{use.total}"])
        for p in cluster.pending():
            pending.append([name, p.owner, p.pod, p.reason])
    lines = _table(["CLUSTER", "POOL", "DEVICES USED"], rows)
    if not pending:
        return [*lines, "", "No Pending pods."]
    return [*lines, "", *_table(["CLUSTER", "WORKLOAD", "PENDING POD", "REASON"], pending)]


def services(world: World) -> list[str]:
    rows = []
    for key in world.ordered():
        kind, ns, name = key
        if kind != "ModelService":
            continue
        status = world.xrs[key].obj.get("status") or {}
        backends = ", ".join(e.get("name", "") for e in status.get("endpoints") or []) or "-"
        rows.append([f"{ns}/{name}", status.get("address", "-"), backends])
    return _table(["SERVICE", "ADDRESS", "ENDPOINTS"], rows)


def conditions(world: World) -> list[str]:
    """Every XR with READY and each condition's reason and message."""
    lines = []
    for key in world.ordered():
        state = world.xrs[key]
        ready = _condition(state.obj, "Ready")
        mark = "True" if ready and ready.get("status") == "True" else "False"
        lines.append(f"{label(key)}  READY={mark}")
        if state.fatal:
            lines.append(f"  FATAL: {state.fatal}")
        for c in (state.obj.get("status") or {}).get("conditions") or []:
            msg = f": {c['message']}" if c.get("message") else ""
            lines.append(f"  {c.get('type')}={c.get('status')} {c.get('reason', '')}{msg}")
    return lines


def _condition(obj: dict, typ: str) -> dict | None:
    return C.find(obj.get("status"), typ)


def resources(world: World) -> str:
    """One YAML stream of every XR (with status) and every composed resource."""
    docs: list[dict] = []
    for key in world.ordered():
        state = world.xrs[key]
        docs.append(state.obj)
        docs.extend(obj for _, obj in sorted(state.composed.items()) if not _is_xr_child(world, obj))
    return yamlout.dump_documents(docs)


def _is_xr_child(world: World, obj: dict) -> bool:
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace", ""), meta.get("name", "")) in world.xrs


def summary_counts(world: World) -> dict[str, tuple[int, int]]:
    """kind -> (ready, total)."""
    out: dict[str, tuple[int, int]] = {}
    for key in world.ordered():
        kind = key[0]
        ready = _condition(world.xrs[key].obj, "Ready")
        r, t = out.get(kind, (0, 0))
        out[kind] = (r + (1 if ready and ready.get("status") == "True" else 0), t + 1)
    return out


Probe = Callable[[str], str]


def routes(world: World, probe: Probe | None = None) -> list[str]:
    """Per ModelService: its URL and what its routes send to (per endpoint: its weight, the
    cluster gateway or provider it goes through, the replica backends the cluster route picks);
    per deployment: each replica's own URL. ``probe`` (``simulate --lab``) asks one URL for a
    live answer; without it the ANSWER column says ``-``."""
    rows: list[list[str]] = []
    for key in world.ordered():
        kind, ns, name = key
        if kind != "ModelService":
            continue
        state = world.xrs[key]
        status = state.obj.get("status") or {}
        url = status.get("address", "")
        rows.append([f"{ns}/{name}", url + "/" if url else "-", "", "", "", _answer(probe, url)])
        hops = _cluster_hops(state.composed)
        for e in status.get("endpoints") or []:
            endpoint = world.xrs.get(("ModelEndpoint", ns, e.get("name", "")))
            spec = (endpoint.obj.get("spec") or {}) if endpoint else {}
            replica = spec.get("replica") or {}
            via = spec.get("url", "-")
            refs = [r.get("name", "") for r in replica.get("backendRefs") or []]
            picked = [n for n in refs if n in hops.get(replica.get("cluster", ""), set())]
            rows.append([f"  {e.get('name', '')}", via, str(e.get("weight", 0)), replica.get("cluster", "external"),
                         ", ".join(picked) or ("-" if replica else "(provider)"), ""])
    for key in world.ordered():
        kind, ns, name = key
        if kind != "ModelDeployment":
            continue
        for p in sorted(((world.xrs[key].obj.get("status") or {}).get("placements") or []),
                        key=lambda p: p.get("index") or 0):
            url = _endpoint_url(world, ns, p.get("name", ""))
            rows.append([f"{ns}/{name}/{p.get('index')}", url, "", p.get("cluster", "-"), "", _answer(probe, url)])
    return _table(["ROUTE", "URL", "WEIGHT", "CLUSTER", "BACKENDS", "ANSWER"], rows)


def _cluster_hops(composed: dict[str, dict]) -> dict[str, set[str]]:
    """Cluster -> the backend names the service's route on that cluster carries (as observed)."""
    out: dict[str, set[str]] = {}
    for name, obj in composed.items():
        if not name.startswith("route-") or obj.get("kind") != "Object":
            continue
        manifest = ((obj.get("status") or {}).get("atProvider") or {}).get("manifest") or \
            ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}
        names = {r.get("name", "") for rule in (manifest.get("spec") or {}).get("rules") or []
                 for r in rule.get("backendRefs") or []}
        out[name.removeprefix("route-")] = names
    return out


def _answer(probe: Probe | None, url: str) -> str:
    if probe is None or not url or url == "-":
        return "-"
    return probe(url)
