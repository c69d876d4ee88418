"""examples/fleet over the lab's real data plane: what answers, what an unready replica gets, and how
far a Leader/Worker or prefill/decode replica can be judged here.

``simulate --lab`` composes a copy of examples/fleet onto the session lab (its clusters are the
example fleet's, conftest.fleet_dir), Traefik serves every gateway and a mock engine answers on
every engine pod. A client on the host then sends real requests:

- each single-pod replica through its cluster gateway (``/<ns>/<replica>/v1/...``), and each
  ModelService the lab can answer through its URL, counting who answered against the weights
  its status routes; the engine must see ``/v1/...`` whatever prefix matched;
- a ModelService that mixes in an external provider (``search``) gets no request: its provider
  keeps Envoy Gateway kinds and has no target in the lab, and its in-fleet share is a
  prefill/decode replica (an InferencePool); the test checks the routes it composed and what
  Traefik says about them instead;
- an engine flipped unready (``POST /mock/health``) gets no request until it is ready again;
- Leader/Worker and prefill/decode replicas up to the endpoint picker: Traefik v3.7.13 has no
  InferencePool backend (docs/ml/send-a-request.md cites its source), so past the picker the lab
  judges nothing.
"""
from __future__ import annotations

import collections
import json
import shutil
import time
from dataclasses import dataclass

import pytest
from modelplane import paths
from modelplane.kube import Client
from modelplane.lab.backend import LabPhysical
from modelplane.lab.remote import Remote
from modelplane.simulate.loop import simulate
from modelplane.validate.admission import load_dir

from tests.lab.examples_helpers import (
    call,
    chat,
    condition,
    engine_url,
    kube,
    leader_worker,
    placements,
    pods,
    prefill_decode,
    replica_refs,
    route_conditions,
    running_and_ready,
    served,
    served_names,
    set_ready,
    single_pod,
    unanswered,
    wait_for,
    xrs,
)
from tests.lab.lab_fleet import need_data_plane

pytestmark = [pytest.mark.slow, pytest.mark.lab]

EXAMPLES = paths.EXAMPLES / "fleet"
CONTROL_PLANE = "control-plane"
REQUESTS = 300        # per ModelService the lab can answer
# Traefik's weighted round robin is deterministic (smooth WRR per hop), so the split over 300
# requests is off its weights by a few requests at most; 5 points is the issue's own tolerance.
TOLERANCE = 0.05
ROUTES = "/apis/gateway.networking.k8s.io/v1/namespaces/{ns}/httproutes/{name}"
POOLS = "/apis/inference.networking.k8s.io/v1/namespaces/{ns}/inferencepools/{name}"
POOL_KIND = ("inference.networking.k8s.io", "InferencePool")


@dataclass
class Fleet:
    world: object
    clients: dict[str, Client]          # every lab API server by cluster name, and CONTROL_PLANE

    def status(self, kind: str, ns: str, name: str) -> dict:
        return self.world.xrs[(kind, ns, name)].obj.get("status") or {}

    def gateway(self, cluster: str) -> str:
        return self.status("InferenceCluster", "", cluster)["gateway"]["address"]


@pytest.fixture(scope="module")
def fleet(lab, tmp_path_factory):
    need_data_plane(lab)
    clusters, _ = load_dir(EXAMPLES)
    wanted = {d["metadata"]["name"] for d in clusters if d.get("kind") == "InferenceCluster"}
    missing = sorted(wanted - set(lab.clusters))
    assert not missing, f"the session lab lacks examples/fleet's clusters {missing}: see conftest.fleet_dir"
    directory = tmp_path_factory.mktemp("examples") / "fleet"
    shutil.copytree(EXAMPLES, directory)
    start = time.monotonic()
    world, outcome, _ = simulate(directory, physical=LabPhysical(Remote(lab)))
    assert outcome.converged, outcome.still_changing
    print(f"\nexamples/fleet composed onto the lab in {time.monotonic() - start:.0f}s")
    clients = {name: kube(info) for name, info in lab.clusters.items()}
    clients[CONTROL_PLANE] = kube(lab.control_plane)
    return Fleet(world, clients)


def _endpoints(fleet: Fleet, ns: str, service: str) -> list[tuple[str, int, dict]]:
    """(ModelEndpoint name, weight, its ``spec.replica`` or {} for an external provider)."""
    out = []
    for e in fleet.status("ModelService", ns, service).get("endpoints") or []:
        spec = fleet.world.xrs[("ModelEndpoint", ns, e["name"])].obj.get("spec") or {}
        out.append((e["name"], int(e.get("weight", 1)), spec.get("replica") or {}))
    return out


def _answerable(replica: dict) -> bool:
    """An in-fleet replica routed to Services (not an InferencePool): Traefik can carry it."""
    refs = replica.get("backendRefs") or []
    return bool(replica) and bool(refs) and all((r.get("group") or "", r.get("kind")) == ("", "Service") for r in refs)


# ----- single-pod replicas and ModelServices -----------------------------------------------
def test_every_single_pod_deployment_answers_on_its_replica_url_with_the_v1_path(fleet):
    deployments = [(ns, name, obj) for ns, name, obj in xrs(fleet.world, "ModelDeployment") if single_pod(obj["spec"])]
    assert deployments, "examples/fleet has no single-pod ModelDeployment"
    seen = []
    for ns, name, obj in deployments:
        model = min(served_names(obj["spec"]))
        placed = obj["status"]["placements"]
        assert len(placed) == obj["spec"]["replicas"], (name, placed)
        for p in placed:
            assert [r["kind"] for r in replica_refs(fleet.world, ns, p["name"])] == ["Service"], p["name"]
            base = f"http://{fleet.gateway(p['cluster'])}/{ns}/{p['name']}"
            listed = call("GET", base + "/v1/models")
            assert listed.status == 200, (base, listed)
            assert model in {m["id"] for m in listed.json()["data"]}
            for path, body in (("/v1/chat/completions", chat(model)),
                               ("/v1/completions", {"model": model, "prompt": "hi", "max_tokens": 4})):
                got = call("POST", base + path, body)
                assert got.status == 200, (base + path, got)
                assert (got.who["deployment"], got.who["replica"], got.who["cluster"]) == \
                    (name, str(p["index"]), p["cluster"]), got.who
                assert got.json()["model"] == model
                assert got.json()["modelplane"]["path"] == path       # the prefix was rewritten away
            seen.append(f"{ns}/{p['name']}")
    print(f"\nsingle-pod replicas answering on their cluster gateway: {', '.join(seen)}")


def test_every_model_service_the_lab_can_answer_splits_by_the_weights_its_status_routes(fleet):
    by_replica = placements(fleet.world)
    sent, not_sent = [], []
    for ns, name, obj in xrs(fleet.world, "ModelService"):
        endpoints = _endpoints(fleet, ns, name)
        assert endpoints, f"ModelService {ns}/{name} routes to no endpoint"
        if not all(_answerable(replica) for _, _, replica in endpoints):
            not_sent.append(f"{ns}/{name}")       # judged by the mixed-service and topology tests
            continue
        want: collections.Counter[str] = collections.Counter()
        for endpoint, weight, _ in endpoints:
            want[by_replica[endpoint][1]] += weight
        total = sum(want.values())
        models = set.intersection(*(served_names(fleet.world.xrs[("ModelDeployment", ns, d)].obj["spec"])
                                    for d in want))
        assert models, f"{ns}/{name}: its deployments share no served model name"
        model = min(models)
        url = obj["status"]["address"]
        counts: collections.Counter[str] = collections.Counter()
        for i in range(REQUESTS):
            path, body = (("/v1/chat/completions", chat(model)) if i % 2 == 0
                          else ("/v1/completions", {"model": model, "prompt": "hi", "max_tokens": 4}))
            got = call("POST", url + path, body)
            assert got.status == 200, (url + path, got)
            assert got.json()["modelplane"]["path"] == path, got.body     # /v1/... whatever prefix matched
            counts[got.who["deployment"]] += 1
        assert set(counts) <= set(want), (name, counts, want)
        for deployment, weight in want.items():
            share = counts[deployment] / REQUESTS
            assert abs(share - weight / total) <= TOLERANCE, (name, deployment, counts, want)
        sent.append(f"{ns}/{name} {dict(counts)} of {REQUESTS} (weights {dict(want)})")
    assert sent, "no ModelService of examples/fleet is answerable in the lab"
    print(f"\nservices answered: {'; '.join(sent)}; not sent: {', '.join(not_sent) or 'none'}")


def test_a_streaming_answer_arrives_through_a_service(fleet):
    ns, name, obj = next((ns, name, obj) for ns, name, obj in xrs(fleet.world, "ModelService")
                         if all(_answerable(r) for _, _, r in _endpoints(fleet, ns, name)))
    deployment = placements(fleet.world)[_endpoints(fleet, ns, name)[0][0]][1]
    model = min(served_names(fleet.world.xrs[("ModelDeployment", ns, deployment)].obj["spec"]))
    got = call("POST", obj["status"]["address"] + "/v1/chat/completions",
               {**chat(model), "stream": True, "max_tokens": 6})
    assert got.status == 200 and got.who["deployment"] == deployment, got
    events = [line[len("data: "):] for line in got.body.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and len(events) >= 3, events
    chunks = [json.loads(e) for e in events[:-1]]
    assert {c["model"] for c in chunks} == {model}
    assert {c["modelplane"]["path"] for c in chunks} == {"/v1/chat/completions"}


def test_a_mixed_service_keeps_envoy_kinds_for_its_provider_and_is_not_sent_to(fleet):
    """``search``: 9 parts in-fleet (prefill/decode), 1 part Together. Its control-plane route is
    admitted and Accepted by Traefik, which cannot load the provider's Envoy kinds (ResolvedRefs=False,
    InvalidKind); the in-fleet share goes to the replica's cluster gateway through a Service and an
    EndpointSlice, and on to an InferencePool there, which Traefik cannot load either."""
    mixed = [(ns, name) for ns, name, _ in xrs(fleet.world, "ModelService")
             if any(not replica for _, _, replica in _endpoints(fleet, ns, name))]
    assert mixed, "examples/fleet has no ModelService with an external provider"
    cp = fleet.clients[CONTROL_PLANE]
    for ns, name in mixed:
        route = cp.get(ROUTES.format(ns=ns, name=name))
        [rule] = route["spec"]["rules"]
        refs = {r["name"]: r for r in rule["backendRefs"]}
        for endpoint, weight, replica in _endpoints(fleet, ns, name):
            routing = fleet.status("ModelEndpoint", ns, endpoint).get("routing") or {}
            ref = refs[routing["backendName"]]
            assert ref.get("weight", 1) == weight, (endpoint, ref)
            if replica:
                # in-fleet: a core Service whose EndpointSlice is the replica's cluster gateway
                assert (ref.get("group") or "", ref["kind"]) == ("", "Service"), ref
                slices = cp.request("GET", f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
                                    query={"labelSelector": f"kubernetes.io/service-name={ref['name']}"})["items"]
                addresses = {a for s in slices for e in s.get("endpoints") or [] for a in e["addresses"]}
                assert addresses == {fleet.gateway(replica["cluster"])}, (ref["name"], addresses)
                hop = fleet.clients[replica["cluster"]].get(ROUTES.format(ns=ns, name=name))
                hop_refs = {(r.get("group", ""), r["kind"], r["name"]) for rr in hop["spec"]["rules"]
                            for r in rr["backendRefs"]}
                assert {(r.get("group") or "", r["kind"], r["name"]) for r in replica["backendRefs"]} <= hop_refs
                if not _answerable(replica):
                    verdict = route_conditions(hop)["ResolvedRefs"]
                    assert (verdict["status"], verdict["reason"]) == ("False", "InvalidKind"), verdict
                    assert "unsupported HTTPBackendRef inference.networking.k8s.io/InferencePool/" in verdict["message"]
            else:
                # external: Envoy Gateway's Backend (and its credential filter), kept as they are
                assert ref["group"] == "gateway.envoyproxy.io" and ref["kind"] == "Backend", ref
        conditions = route_conditions(route)
        assert conditions["Accepted"]["status"] == "True", conditions
        resolved = conditions["ResolvedRefs"]
        assert (resolved["status"], resolved["reason"]) == ("False", "InvalidKind"), resolved
        assert "gateway.envoyproxy.io/" in resolved["message"], resolved
        print(f"\n{ns}/{name}: control-plane route ResolvedRefs=False/InvalidKind: {resolved['message']}")


# ----- an unready replica --------------------------------------------------------------------
def _slice_ready(client: Client, ns: str, service: str, ip: str) -> bool | None:
    """The ``ready`` condition the cluster's EndpointSlice controller wrote for ``ip`` (None: not listed)."""
    slices = client.request("GET", f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
                            query={"labelSelector": f"kubernetes.io/service-name={service}"})["items"]
    for s in slices:
        for e in s.get("endpoints") or []:
            if ip in e["addresses"]:
                return bool((e.get("conditions") or {}).get("ready"))
    return None


def _pod_ready(client: Client, ns: str, name: str) -> str:
    pod = client.get(f"/api/v1/namespaces/{ns}/pods/{name}")
    return condition(pod["status"].get("conditions"), "Ready").get("status", "")


def test_an_unready_replica_receives_no_request_and_answers_again_when_ready(fleet):
    """Flip the engine of the replica a ModelService routes to: the lab's engine supervisor sets its pod
    NotReady, the cluster's EndpointSlice controller marks it not ready, and Traefik must stop sending
    to it, on the service URL and on the replica's own URL, while a sibling replica on the same
    gateway keeps answering; flipped back, it answers again."""
    ns, service, obj = next((ns, name, obj) for ns, name, obj in xrs(fleet.world, "ModelService")
                            if all(_answerable(r) for _, _, r in _endpoints(fleet, ns, name)))
    endpoint, _, replica = _endpoints(fleet, ns, service)[0]
    _, deployment, placement = placements(fleet.world)[endpoint]
    model = min(served_names(fleet.world.xrs[("ModelDeployment", ns, deployment)].obj["spec"]))
    client = fleet.clients[replica["cluster"]]
    [ref] = replica["backendRefs"]
    svc = client.get(f"/api/v1/namespaces/{ns}/services/{ref['name']}")
    [pod] = pods(client, ns, svc["spec"]["selector"])
    engine, ip = engine_url(pod), pod["status"]["podIP"]
    gateway = f"http://{fleet.gateway(replica['cluster'])}"
    urls = (obj["status"]["address"] + "/v1/chat/completions", f"{gateway}/{ns}/{endpoint}/v1/chat/completions")
    siblings = [p for n, (pns, d, p) in placements(fleet.world).items()
                if n != endpoint and p["cluster"] == replica["cluster"]
                and single_pod(fleet.world.xrs[("ModelDeployment", pns, d)].obj["spec"])]
    assert siblings, f"no other single-pod replica on {replica['cluster']} to compare with"
    sibling = siblings[0]
    sibling_dep = placements(fleet.world)[sibling["name"]][1]
    sibling_model = min(served_names(fleet.world.xrs[("ModelDeployment", ns, sibling_dep)].obj["spec"]))
    sibling_url = f"{gateway}/{ns}/{sibling['name']}/v1/chat/completions"

    assert all(call("POST", u, chat(model)).status == 200 for u in urls)
    set_ready(engine, False)
    try:
        gone = wait_for("the data plane stops sending to the unready engine",
                        lambda: call("POST", urls[0], chat(model)).status != 200)
        assert _pod_ready(client, ns, pod["metadata"]["name"]) == "False"
        assert _slice_ready(client, ns, ref["name"], ip) is False
        before = served(engine)
        answers = [call("POST", u, chat(model)) for _ in range(40) for u in urls]
        others = [call("POST", sibling_url, chat(sibling_model)) for _ in range(20)]
        after = served(engine)
    finally:
        set_ready(engine, True)
    assert after == before, f"the unready engine finished {after - before} requests"
    assert {a.status for a in answers} == {503}, collections.Counter(a.status for a in answers)
    assert not any(a.who for a in answers)        # Traefik answered itself: no engine did
    assert all(o.status == 200 and o.who["deployment"] == sibling_dep for o in others)

    back = wait_for("the engine answers again once ready",
                    lambda: call("POST", urls[0], chat(model)).status == 200)
    assert _pod_ready(client, ns, pod["metadata"]["name"]) == "True"
    assert _slice_ready(client, ns, ref["name"], ip) is True
    before = served(engine)
    again = [call("POST", u, chat(model)) for _ in range(10) for u in urls]
    assert all(a.status == 200 and a.who["pod"] == pod["metadata"]["name"] for a in again), again[:3]
    assert served(engine) - before == len(again)
    print(f"\n{deployment} replica {placement['index']}: out of routing {gone:.1f}s after its engine said "
          f"unready, back {back:.1f}s after it said ready")


# ----- Leader/Worker and prefill/decode: up to the endpoint picker ---------------------------
def _up_to_the_picker(fleet: Fleet, ns: str, replica: str, cluster: str) -> tuple[dict, list[dict]]:
    """What the lab can judge of a replica routed to an InferencePool; returns (pool, its pods).

    The pool is admitted on the cluster and nobody claims it (no status parents: Traefik has no
    InferencePool code); its endpoint picker's Service and Deployment exist and its pods are Running
    and Ready (kwok's: no picker process runs, so nothing answers on its port); the replica's route references
    the pool, Traefik accepts the route and reports ResolvedRefs=False/InvalidKind, and answers the
    replica's URL with a 500 (its weighted service for a backendRef it cannot load)."""
    client = fleet.clients[cluster]
    refs = replica_refs(fleet.world, ns, replica)
    assert [(r.get("group"), r["kind"]) for r in refs] == [POOL_KIND], refs
    pool = client.get(POOLS.format(ns=ns, name=refs[0]["name"]))
    assert pool["apiVersion"] == "inference.networking.k8s.io/v1"
    assert not (pool.get("status") or {}).get("parents"), pool.get("status")

    picker = pool["spec"]["endpointPickerRef"]
    svc = client.get(f"/api/v1/namespaces/{ns}/services/{picker['name']}")
    assert picker["port"]["number"] in {p["port"] for p in svc["spec"]["ports"]}, svc["spec"]["ports"]
    deploys = [d for d in client.get(f"/apis/apps/v1/namespaces/{ns}/deployments")["items"]
               if svc["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items()]
    assert len(deploys) == 1, [d["metadata"]["name"] for d in deploys]
    status = deploys[0].get("status") or {}
    assert status.get("availableReplicas") == deploys[0]["spec"]["replicas"] >= 1, status
    picker_pods = pods(client, ns, svc["spec"]["selector"])
    assert picker_pods and all(running_and_ready(p) for p in picker_pods)
    assert all(unanswered(f"http://{p['status']['podIP']}:{picker['port']['number']}") for p in picker_pods)

    route = client.get(ROUTES.format(ns=ns, name=replica))
    assert [(r.get("group"), r["kind"], r["name"]) for rule in route["spec"]["rules"]
            for r in rule["backendRefs"]] == [(*POOL_KIND, pool["metadata"]["name"])]
    conditions = route_conditions(route)
    assert conditions["Accepted"]["status"] == "True", conditions
    resolved = conditions["ResolvedRefs"]
    assert (resolved["status"], resolved["reason"]) == ("False", "InvalidKind"), resolved
    assert f"unsupported HTTPBackendRef inference.networking.k8s.io/InferencePool/{pool['metadata']['name']}" \
        in resolved["message"], resolved
    through = call("GET", f"http://{fleet.gateway(cluster)}/{ns}/{replica}/v1/models")
    assert (through.status, through.who) == (500, {}), through

    selected = pods(client, ns, pool["spec"]["selector"]["matchLabels"])
    assert selected and all(running_and_ready(p) for p in selected), [p["metadata"]["name"] for p in selected]
    return pool, selected


def _answers_directly(pod: dict, model: str) -> None:
    """The pod's engine, on its pod IP and port from the host: lists the model, answers a completion."""
    url = engine_url(pod)
    listed = call("GET", url + "/v1/models")
    assert listed.status == 200 and listed.who["pod"] == pod["metadata"]["name"], (url, listed)
    assert model in {m["id"] for m in listed.json()["data"]}
    got = call("POST", url + "/v1/chat/completions", chat(model))
    assert got.status == 200 and got.json()["model"] == model, (url, got)


def _replicas(fleet: Fleet, kind) -> list[tuple[str, str, dict, dict]]:
    out = [(ns, name, obj["spec"], p) for ns, name, obj in xrs(fleet.world, "ModelDeployment") if kind(obj["spec"])
           for p in obj["status"]["placements"]]
    assert out, f"examples/fleet has no placed {kind.__name__} ModelDeployment"
    return out


def test_a_leader_worker_replica_is_ready_up_to_the_endpoint_picker(fleet):
    for ns, name, spec, p in _replicas(fleet, leader_worker):
        client = fleet.clients[p["cluster"]]
        pool, selected = _up_to_the_picker(fleet, ns, p["name"], p["cluster"])
        # the pool picks the leader only; the whole group (leader and workers) runs, Ready
        assert [s["metadata"]["labels"]["modelplane.ai/role"] for s in selected] == ["leader"], selected
        group = pods(client, ns, {"modelplane.ai/deployment": name, "modelplane.ai/replica": str(p["index"])})
        workers = [g for g in group if g["metadata"]["labels"]["modelplane.ai/role"] == "worker"]
        members = {m["role"]: m for e in spec["engines"] for m in e["members"]}
        assert len(workers) == members["Worker"]["worker"]["nodes"], [g["metadata"]["name"] for g in group]
        assert all(running_and_ready(g) for g in group)
        lws = client.get(f"/apis/leaderworkerset.x-k8s.io/v1/namespaces/{ns}/leaderworkersets")["items"]
        mine = [w for w in lws if w["metadata"]["labels"].get("modelplane.ai/deployment") == name]
        assert mine and all(condition(w["status"].get("conditions"), "Available").get("status") == "True"
                            for w in mine), [w.get("status") for w in mine]
        [leader] = selected
        assert engine_url(leader).endswith(f":{pool['spec']['targetPorts'][0]['number']}")
        _answers_directly(leader, min(served_names(spec)))
        # a multi-node worker serves no HTTP (vLLM --headless), as the real one
        assert all(unanswered(engine_url(w)) for w in workers)


def test_a_prefill_decode_replica_is_ready_up_to_the_endpoint_picker(fleet):
    for ns, name, spec, p in _replicas(fleet, prefill_decode):
        pool, selected = _up_to_the_picker(fleet, ns, p["name"], p["cluster"])
        target = pool["spec"]["targetPorts"][0]["number"]
        copies = {e["phase"].lower(): int(e.get("copies", 1)) for e in spec["engines"]}
        roles = collections.Counter(s["metadata"]["labels"]["llm-d.ai/role"] for s in selected)
        assert roles == copies, (roles, copies)
        model = min(served_names(spec))
        for pod in selected:
            _answers_directly(pod, model)
            role = pod["metadata"]["labels"]["llm-d.ai/role"]
            port = int(engine_url(pod).rsplit(":", 1)[1])
            if role == "prefill":
                assert port == target, (pod["metadata"]["name"], port, target)
            else:
                # decode: the engine moved aside for llm-d's routing sidecar, which owns the pool's
                # target port; the lab runs no sidecar, so nothing answers there (what the lab cannot judge)
                sidecars = [c for c in pod["spec"].get("initContainers") or [] if c.get("restartPolicy") == "Always"]
                assert any(target in {q["containerPort"] for q in c.get("ports") or []} for c in sidecars), sidecars
                assert port != target and unanswered(f"http://{pod['status']['podIP']}:{target}")
