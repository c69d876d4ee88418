"""Real Crossplane reconciles Modelplane on the lab, end to end (``make e2e-crossplane``).

The session (conftest) starts one lab workload cluster per platform
InferenceCluster, registered as Existing, and a control plane where
Crossplane core v2.3 installed our Configuration from a local registry and
runs provider-kubernetes, provider-helm and the eight functions. Then, in
order, as a user would: apply the platform manifests, the ML team's, scale,
delete. The tests share that one world and run in file order.
"""
from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

import pytest
import yaml
from modelplane import paths
from modelplane.e2e import parity, traffic
from modelplane.lab.remote import Remote
from modelplane.platform import stack
from modelplane.validate import is_xrd, to_crd

pytestmark = [pytest.mark.slow, pytest.mark.e2e_crossplane]

XR_KINDS = ("inferenceclasses", "inferenceclusters", "inferencegateways", "modeldeployments", "modelreplicas",
            "modelendpoints", "modelservices", "modelcaches")
XR_KINDS_OF = ("InferenceClass", "InferenceCluster", "InferenceGateway", "ModelDeployment", "ModelReplica",
               "ModelEndpoint", "ModelService", "ModelCache")
FUNCTIONS = sorted(f"modelplane-{p.name}" for p in paths.FUNCTIONS.iterdir() if (p / "package").is_dir())


def _ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def _unready(items: list[dict]) -> list[str]:
    out = []
    for o in items:
        if _ready(o):
            continue
        conds = {c["type"]: c.get("message") or c.get("reason") for c in (o.get("status") or {}).get("conditions") or []
                 if c.get("status") != "True"}
        out.append(f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}: {conds}")
    return out


def _all_ready(e2e, plural: str, namespace_all: bool = True):
    items = e2e.get(plural, *(("-A",) if namespace_all else ())).get("items") or []
    bad = _unready(items)
    return items if items and not bad else "; ".join(bad) or f"no {plural} yet"


# --- install ------------------------------------------------------------------------------


def test_the_configuration_and_its_dependencies_are_installed(e2e):
    pkgs = e2e.get("configurations,providers,functions")["items"]
    health = {f"{p['kind']}/{p['metadata']['name']}": _cond(p, "Healthy") for p in pkgs}
    assert health["Configuration/modelplane"] == "True"
    for fn in FUNCTIONS:
        assert health[f"Function/{fn}"] == "True", fn
    for prov in ("crossplane-contrib-provider-kubernetes", "crossplane-contrib-provider-helm"):
        assert health[f"Provider/{prov}"] == "True", prov
    # Every FunctionRevision is dialled where the External runtime serves it.
    revs = e2e.get("functionrevisions")["items"]
    active = [r for r in revs if r["spec"]["desiredState"] == "Active"]
    assert sorted(r["metadata"]["labels"]["pkg.crossplane.io/package"] for r in active) == FUNCTIONS
    assert all(r["status"]["endpoint"].startswith("127.0.0.1:") for r in active)
    _functions_run_as_asked(e2e, active)


def _functions_run_as_asked(e2e, active: list[dict]) -> None:
    """With ``MODELPLANE_E2E_FUNCTIONS=image`` (``make e2e-crossplane-images``), what Crossplane dials
    for each FunctionRevision is a container of the revision's own package image, pulled from the
    local registry: the image a user's cluster would run."""
    from modelplane.e2e import controlplane, podman

    rec = controlplane.Record.load(e2e.state / "control-plane")
    assert rec.functions == controlplane.functions_mode()
    if rec.functions != "image":
        return
    runners = json.loads((e2e.state / "control-plane" / "runtime" / "runtime.json").read_text())
    running = {c["Names"][0]: c for c in json.loads(podman.run("ps", "--format", "json").stdout or "[]")}
    for rev in active:
        pkg = rev["metadata"]["labels"]["pkg.crossplane.io/package"]
        runner, image = runners[pkg], rev["status"]["resolvedImage"]
        assert runner["image"] == image, pkg
        assert image.endswith(f"/xpkg.crossplane.io/modelplane/{pkg.removeprefix('modelplane-')}:{rev['spec']['image'].rsplit(':', 1)[1]}")
        container = running[f"mp-{pkg}"]
        assert container["Id"] == runner["container"] and container["Image"] == image
        ports = {(p["host_ip"], p["host_port"], p["container_port"]) for p in container["Ports"]}
        assert ("127.0.0.1", int(rev["status"]["endpoint"].rsplit(":", 1)[1]), 9443) in ports, ports


def _cond(obj: dict, typ: str) -> str:
    return next((c["status"] for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == typ), "")


def test_crossplane_derives_the_crds_our_validator_derives(e2e):
    """The CRD Crossplane generated for each XRD equals ``modelplane.validate.to_crd`` (spec for spec)."""
    xrds = [d for p in sorted(paths.APIS.glob("*/definition.yaml")) for d in yaml.safe_load_all(p.read_text())
            if is_xrd(d)]
    assert len(xrds) == len(XR_KINDS)
    for xrd in xrds:
        name = xrd["metadata"]["name"]
        served = e2e.get("crd", name)
        ours = to_crd(xrd)
        assert _normal(served["spec"]) == _normal(ours["spec"]), name


def _normal(spec: dict) -> dict:
    """The server adds defaults our derivation leaves out (conversion None, listKind, singular)."""
    spec = json.loads(json.dumps(spec))
    if spec.get("conversion") == {"strategy": "None"}:
        spec.pop("conversion")
    names = spec.get("names") or {}
    names.setdefault("listKind", names.get("kind", "") + "List")
    names.setdefault("singular", names.get("kind", "").lower())
    return spec


# --- the platform team ---------------------------------------------------------------------


def test_platform_examples_become_ready(e2e):
    e2e.kubectl("apply", "-f", str(e2e.state / "fleet"))
    for plural in ("inferenceclasses", "inferenceclusters", "inferencegateways"):
        e2e.wait(f"{plural} Ready", lambda p=plural: _all_ready(e2e, p), timeout=420)
    clusters = e2e.get("inferenceclusters")["items"]
    assert sorted(c["metadata"]["name"] for c in clusters) == sorted(e2e.lab.clusters)


def test_stack_releases_exist_with_the_pinned_charts(e2e):
    """provider-helm installed each pinned chart (the lab's stand-in under that name and version)."""
    releases = e2e.get("releases.helm.m.crossplane.io", "-A")["items"]
    for ic in e2e.get("inferenceclusters")["items"]:
        cluster = ic["metadata"]["name"]
        settings = dict(ic["spec"].get("stack") or {})
        if (ic["spec"].get("gateway") or {}).get("className"):   # bring your own gateway: no Envoy Gateway
            settings["envoyGateway"] = {**(settings.get("envoyGateway") or {}), "enabled": False}
        pinned = {(ch.name, (settings.get(comp.key) or {}).get("version") or comp.version)
                  for comp in stack.COMPONENTS if (settings.get(comp.key) or {}).get("enabled", True)
                  for ch in comp.charts}
        mine = [r for r in releases if r["spec"]["providerConfigRef"]["name"] == cluster]
        got = {(r["spec"]["forProvider"]["chart"]["name"], r["spec"]["forProvider"]["chart"]["version"]) for r in mine}
        assert got == pinned, cluster
        for r in mine:
            assert _ready(r), (r["metadata"]["name"], r.get("status"))
            assert r["status"]["atProvider"]["state"] == "deployed"
        # Helm's own record on the workload cluster: one release Secret per chart.
        secrets = e2e.get("secrets", "-A", "-l", "owner=helm", kubeconfig=e2e.cluster_kubeconfig(cluster))["items"]
        assert len({s["metadata"]["labels"]["name"] for s in secrets}) == len(pinned), cluster


# --- the ML team ---------------------------------------------------------------------------


def test_ml_team_examples_become_ready(e2e):
    e2e.kubectl("create", "namespace", "ml-team", check=False)
    e2e.kubectl("apply", "-f", str(paths.EXAMPLES / "ml-team"))
    for plural in ("modeldeployments", "modelreplicas", "modelcaches", "modelendpoints", "modelservices"):
        e2e.wait(f"{plural} Ready", lambda p=plural: _all_ready(e2e, p), timeout=600)
    for md in e2e.get("modeldeployments", "-A")["items"]:
        reps = md["status"]["replicas"]
        assert reps["ready"] == reps["desired"] == md["spec"]["replicas"], md["metadata"]["name"]


def _placements(e2e) -> dict[str, dict]:
    return {r["metadata"]["name"]: r for r in e2e.get("modelreplicas", "-A")["items"]}


def test_workloads_run_on_the_chosen_pools_with_devices_allocated(e2e):
    for name, mr in sorted(_placements(e2e).items()):
        cluster = mr["spec"]["cluster"]["name"]
        kc = e2e.cluster_kubeconfig(cluster)
        pools = {m["pool"] for eng in mr["spec"]["engines"] for m in eng["members"]}
        wants_dra = any(d.get("claim") == "DRA" for eng in mr["spec"]["engines"] for m in eng["members"]
                        for d in m.get("devices") or [])
        selector = f"modelplane.ai/deployment={mr['spec']['deployment']},modelplane.ai/replica={mr['spec']['index']}"
        pods = e2e.get("pods", "-A", "-l", selector, kubeconfig=kc)["items"]
        assert pods, f"{name}: no pod on {cluster} ({selector})"
        nodes = {n["metadata"]["name"]: n for n in e2e.get("nodes", kubeconfig=kc)["items"]}
        claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c
                  for c in e2e.get("resourceclaims", "-A", kubeconfig=kc)["items"]}
        for pod in pods:
            where = (name, pod["metadata"]["name"])
            assert pod["status"]["phase"] == "Running", (*where, pod["status"].get("phase"))
            assert nodes[pod["spec"]["nodeName"]]["metadata"]["labels"]["modelplane.ai/pool"] in pools, where
            statuses = pod["status"].get("resourceClaimStatuses") or []
            assert statuses or not wants_dra, f"{where}: no ResourceClaim, though its members ask for DRA devices"
            for st in statuses:
                claim = claims[(pod["metadata"]["namespace"], st["resourceClaimName"])]
                alloc = (claim.get("status") or {}).get("allocation") or {}
                assert (alloc.get("devices") or {}).get("results"), (*where, st["resourceClaimName"])
                users = {u["uid"] for u in (claim.get("status") or {}).get("reservedFor") or []}
                assert pod["metadata"]["uid"] in users, (*where, st["resourceClaimName"])


def _replica_row(mr: dict) -> tuple:
    members = sorted((e["name"], m["role"], m["pool"]) for e in mr["spec"]["engines"] for m in e["members"])
    return mr["metadata"]["namespace"], mr["metadata"]["name"], mr["spec"]["cluster"]["name"], tuple(members)


def _composed_manifests(obj: dict) -> dict:
    """What an XR composed, as (kind, name) -> the remote manifest or spec, minus what Crossplane stamps."""
    spec = json.loads(json.dumps(obj.get("spec") or {}))
    for field in ("crossplane", "resourceRefs", "compositionRef", "compositionRevisionRef",
                  "compositionUpdatePolicy", "writeConnectionSecretToRef", "managementPolicies"):
        spec.pop(field, None)
    return spec


def _comparable(obj: dict) -> dict:
    """``_composed_manifests`` without what differs by nature (``parity.without_known_differences``)."""
    return parity.without_known_differences(obj.get("kind", ""), _composed_manifests(obj))


def _diff(a, b, path: str = "") -> list[str]:
    """Where two JSON values differ (paths, with both sides), for a readable failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _diff(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: crossplane {json.dumps(a)[:160]} | simulate {json.dumps(b)[:160]}"]


def _served(e2e, refs: list[dict]) -> dict[tuple[str, str, str, str], dict]:
    """The live objects ``refs`` (resourceRefs) name on the control plane, one list call per kind."""
    out: dict[tuple[str, str, str, str], dict] = {}
    for api, kind in sorted({(r["apiVersion"], r["kind"]) for r in refs}):
        group, _, version = api.rpartition("/")
        # kubectl reads KIND.VERSION.GROUP; the core group (a Service) has none: its kind alone.
        resource = f"{kind.lower()}.{version}.{group}" if group else kind.lower()
        for o in e2e.get(resource, "-A")["items"]:
            out[(*parity.ref_key(api, kind, o["metadata"]["name"]), o["metadata"].get("namespace", ""))] = o
    return out


def _agree_with_crossplane(e2e, sim_xrs: dict, sim_composed: dict, owners: tuple[str, ...] = XR_KINDS_OF) -> None:
    """Simulate's XRs and what each composed (``sim_xrs``: key -> XR; ``sim_composed``: key ->
    {(group, kind, name): resource}) against Crossplane's: the same replicas on the same clusters and
    pools, the same composed resources under every XR of the kinds ``owners`` (names; specs equal
    after the server's defaulting, composed XRs' specs included), the same readiness of every XR."""
    sim_replicas = sorted(_replica_row(o) for k, o in sim_xrs.items() if k[0] == "ModelReplica")
    xp_replicas = sorted(_replica_row(r) for r in _placements(e2e).values())
    assert xp_replicas == sim_replicas

    xp_xrs = {parity.key_of(o): o for plural in XR_KINDS for o in e2e.get(plural, "-A")["items"]}
    assert sorted(xp_xrs) == sorted(sim_xrs)
    refs = [dict(r, owner=k) for k, o in xp_xrs.items() for r in (o["spec"].get("crossplane") or {}).get("resourceRefs") or []]
    served = _served(e2e, refs)
    problems = []
    for key, xr in sorted(xp_xrs.items()):
        if key[0] not in owners:
            continue
        mine = {parity.ref_key(r["apiVersion"], r["kind"], r["name"]) for r in refs if r["owner"] == key}
        sim = sim_composed.get(key, {})
        if mine != set(sim):
            problems.append(f"{key}: crossplane composed {sorted(mine - set(sim))} only, simulate {sorted(set(sim) - mine)} only")
            continue
        pairs = [(obj, served.get((*ref, (obj.get("metadata") or {}).get("namespace", ""))))
                 for ref, obj in sorted(sim.items())]
        missing = [parity.key_of(o) for o, got in pairs if got is None]
        assert not missing, (key, missing)
        for (obj, got), want in zip(pairs, e2e.defaulted_all([o for o, _ in pairs])):
            delta = _diff(_comparable(got), _comparable(want))
            if delta:
                problems.append(f"{key} {parity.key_of(obj)}: {delta}")
    # The XRs simulate composed (ModelReplicas, ...) have the specs Crossplane's parents composed.
    composed_xrs = sorted((k, o) for k, o in sim_xrs.items() if parity.controller(o) and parity.controller(o)[0] in owners)
    for (key, xr), want in zip(composed_xrs, e2e.defaulted_all([o for _, o in composed_xrs])):
        delta = _diff(_comparable(xp_xrs[key]), _comparable(want))
        if delta:
            problems.append(f"{key} spec: {delta}")
    assert not problems, "\n".join(problems)

    not_alike = {k: (_ready(o), parity.ready(sim_xrs[k])) for k, o in xp_xrs.items() if _ready(o) != parity.ready(sim_xrs[k])}
    assert not_alike == {}, "Ready (crossplane, simulate) differs"


def _eventually_agree(e2e, *args, timeout: float = 300, every: float = 10, **kwargs) -> None:
    """``_agree_with_crossplane`` once Crossplane has caught up: a ModelService renders its hop-2
    routes only after the replicas it selects publish their backends, and Crossplane reconciles it
    again on a watch event or its poll interval (10 s here), so a comparison made right after the
    examples turn Ready can see a route that is still on its way. Parity is about the state
    Crossplane converges to: the last attempt's difference fails the test."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _agree_with_crossplane(e2e, *args, **kwargs)
            return
        except AssertionError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(every)


def test_simulate_agrees_with_crossplane(e2e, tmp_path):
    """``modelplane simulate`` over the same manifests: same placements, same composed objects, same readiness."""
    from modelplane.simulate.loop import simulate_dir

    fleet = parity.stage(e2e.state / "fleet", [paths.EXAMPLES / "ml-team"], tmp_path / "fleet")
    world, outcome = simulate_dir(fleet)
    assert outcome.converged, outcome.still_changing
    # What ModelReplicas compose only: plain simulate makes up the addresses no network gives it
    # (docs/e2e-crossplane.md), and ModelReplica and ModelEndpoint specs carry the gateway's.
    _eventually_agree(e2e, {k: s.obj for k, s in world.xrs.items()},
                           {k: {parity.ref_key(o["apiVersion"], o["kind"], o["metadata"]["name"]): o
                                for o in s.composed.values()}
                            for k, s in world.xrs.items()}, owners=("ModelReplica",))


def test_simulate_lab_agrees_with_crossplane(e2e):
    """``modelplane simulate --lab`` ran the same manifests on the same lab clusters before the control
    plane existed (conftest): same placements, composed objects and readiness as Crossplane, and the
    same workload pods ran on the clusters: Running, on the chosen pools, with their devices."""
    rec = e2e.simulate_lab
    assert rec["returncode"] == 0, rec["stderr"][-2000:]
    docs = rec["resources"]
    _eventually_agree(e2e, parity.xrs(docs), parity.composed(docs))

    # What ran: every model pod simulate --lab made runs where its replica was placed, holding devices.
    chosen = {"/".join((r["spec"]["deployment"], str(r["spec"]["index"]), e["name"], m["role"].lower())):
              (r["spec"]["cluster"]["name"], m["pool"], any(d.get("claim", "DRA") == "DRA" for d in m.get("devices") or []))
              for k, r in parity.xrs(docs).items() if k[0] == "ModelReplica"
              for e in r["spec"]["engines"] for m in e["members"]}
    namespaces = {k[1] for k in parity.xrs(docs) if k[1]}
    sim_pods = parity.pod_rows(rec["pods"], namespaces)
    model_pods = [row for row in sim_pods if row[2] in chosen]
    assert {row[2] for row in model_pods} == set(chosen)
    for cluster, _ns, what, pool, phase, devices in model_pods:
        want_cluster, want_pool, dra = chosen[what]
        assert (cluster, pool, phase) == (want_cluster, want_pool, "Running"), what
        assert devices > 0 or not dra, what
    # ... and the same pods as under Crossplane (endpoint pickers and cache hydration included).
    xp_pods = parity.pod_rows({c: Remote(e2e.lab).placements(c) for c in sorted(e2e.lab.clusters)}, namespaces)
    assert xp_pods == sim_pods


# --- requests through what Crossplane composed ----------------------------------------------


@pytest.mark.e2e_data_plane
def test_each_model_service_answers_through_the_inference_gateway(e2e):
    """One chat completion per ModelService the lab can answer (``e2e.traffic.unanswerable``), sent to
    its ``status.address``: the control plane's Traefik (serving the Gateway and routes real Crossplane
    composed on its API server) -> the cluster's Traefik -> a mock engine. The answer comes from a
    replica the service routes to, and the engine saw ``/v1/...`` whatever prefix matched."""
    from modelplane.e2e import controlplane

    rec = controlplane.Record.load(e2e.state / "control-plane")
    assert e2e.lab.network is not None and rec.gateway, (
        "the e2e ran without the lab's data plane, so no request can travel: run it as root (it makes a "
        "network namespace) with traefik built (`make tools`), or opt out with MODELPLANE_LAB_DATA_PLANE=0")
    ig = e2e.get("inferencegateways")["items"]
    assert [g["spec"].get("gatewayClassName") for g in ig] == ["modelplane-lab"]
    assert ig[0]["status"]["address"] == rec.gateway, ig[0]["status"]   # Traefik wrote it on the Gateway

    endpoints = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in e2e.get("modelendpoints", "-A")["items"]}
    services = sorted(e2e.get("modelservices", "-A")["items"], key=lambda o: parity.key_of(o))
    assert services
    report, sent = [], 0
    for svc in services:
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        eps = [endpoints[(ns, e["name"])] for e in (svc.get("status") or {}).get("endpoints") or []]
        replicas = {r for e in eps if (r := traffic.replica_of(e))}
        routes = {c: _route(e2e, c, ns, name) for c in sorted({r[2] for r in replicas})}
        why = traffic.unanswerable(svc, eps, routes)
        if why:
            report.append(f"{ns}/{name}: not sent: {why}")
            continue
        url = svc["status"]["address"].rstrip("/")
        assert urlsplit(url).hostname == rec.gateway, url
        code, who, models = traffic.request(url + "/v1/models")
        assert code == 200, (url, models)
        model = models["data"][0]["id"]
        code, who, body = traffic.request(url + "/v1/chat/completions",
                                          {"model": model, "messages": [{"role": "user", "content": "hello"}]})
        assert code == 200, (url, body)
        assert (who.get("deployment"), who.get("replica"), who.get("cluster")) in replicas, (url, who, replicas)
        assert body["model"] == model and body["modelplane"]["path"] == "/v1/chat/completions", body
        report.append(f"{ns}/{name}: 200 {model} from {who.get('cluster')}/{who.get('pod')}")
        sent += 1
    print("\n".join(["", *report]))
    assert sent, "no ModelService the lab can answer:\n" + "\n".join(report)


def _route(e2e, cluster: str, namespace: str, name: str) -> dict | None:
    """The ModelService's HTTPRoute on ``cluster`` (hop 2), None when there is none."""
    out = e2e.kubectl("get", "httproutes.gateway.networking.k8s.io", name, "-n", namespace, "-o", "json",
                      "--ignore-not-found", kubeconfig=e2e.cluster_kubeconfig(cluster))
    return json.loads(out) if out.strip() else None


def test_scale_adds_and_removes_replicas(e2e):
    md = "qwen-demo"
    before = e2e.get("modeldeployment", md, "-n", "ml-team")["spec"]["replicas"]
    e2e.kubectl("scale", f"modeldeployment/{md}", "-n", "ml-team", f"--replicas={before + 1}")

    def grown():
        got = e2e.get("modeldeployment", md, "-n", "ml-team")["status"]["replicas"]
        return got if got["ready"] == before + 1 else f"replicas {got}"

    e2e.wait("scale up", grown, timeout=300)
    e2e.kubectl("scale", f"modeldeployment/{md}", "-n", "ml-team", f"--replicas={before}")

    def shrunk():
        reps = [r for r in _placements(e2e).values() if r["spec"]["deployment"] == md]
        return reps if len(reps) == before else f"{len(reps)} ModelReplicas"

    e2e.wait("scale down", shrunk, timeout=300)


def test_deleting_a_deployment_removes_what_it_composed_on_every_cluster(e2e):
    md = "qwen3-8b"
    replicas = [r for r in _placements(e2e).values() if r["spec"]["deployment"] == md]
    assert replicas
    clusters = {r["spec"]["cluster"]["name"] for r in replicas}
    e2e.kubectl("delete", "modeldeployment", md, "-n", "ml-team", "--wait=false")

    def gone():
        left = []
        for cluster in clusters:
            kc = e2e.cluster_kubeconfig(cluster)
            for kind in ("deployments", "services", "resourceclaimtemplates", "httproutes.gateway.networking.k8s.io"):
                left += [f"{cluster}: {kind}/{o['metadata']['name']}" for o in e2e.get(kind, "-A", kubeconfig=kc)["items"]
                         if o["metadata"]["name"].startswith(md + "-")]
        left += [f"ModelReplica {n}" for n, r in _placements(e2e).items() if r["spec"]["deployment"] == md]
        return True if not left else "; ".join(left)

    e2e.wait("cleanup", gone, timeout=300)


def test_deleting_a_cluster_with_replicas_evicts_them_and_leaves_nothing_behind(e2e):
    """contracts.md: a cluster no longer listed evicts its replicas. Deleting the InferenceCluster
    removes everything it composed (provider configs wait for the Objects that use them)."""
    replicas = _placements(e2e)
    cluster = min(r["spec"]["cluster"]["name"] for r in replicas.values())
    evicted = sorted(n for n, r in replicas.items() if r["spec"]["cluster"]["name"] == cluster)
    assert evicted, cluster
    e2e.kubectl("delete", "inferencecluster", cluster, "--wait=false")

    def gone():
        left = [f"ModelReplica {n}" for n, r in _placements(e2e).items() if r["spec"]["cluster"]["name"] == cluster]
        for plural in ("objects.kubernetes.m.crossplane.io", "releases.helm.m.crossplane.io"):
            left += [f"{plural}/{o['metadata']['name']}" for o in e2e.get(plural, "-A")["items"]
                     if o["spec"]["providerConfigRef"]["name"] == cluster]
        for plural in ("clusterproviderconfigs.kubernetes.m.crossplane.io", "clusterproviderconfigs.helm.m.crossplane.io",
                       "inferenceclusters"):
            left += [f"{plural}/{cluster}" for o in e2e.get(plural)["items"] if o["metadata"]["name"] == cluster]
        return True if not left else "; ".join(left)

    e2e.wait(f"InferenceCluster {cluster} and what it composed gone", gone, timeout=420)
