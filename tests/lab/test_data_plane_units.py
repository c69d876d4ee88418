"""The data plane's pure parts, without a lab: the address plan, engine ports, readiness patches,
the stand-in leaving Traefik's GatewayClass alone, kwok's stage waiting for the engine."""
from __future__ import annotations

import ipaddress

import pytest
from modelplane.kube import components
from modelplane.lab import dataplane, engines, netns, standin


def test_the_address_plan_stays_in_the_test_range_and_never_overlaps():
    test_net = ipaddress.ip_network("198.18.0.0/15")
    seen: set = set()
    for slot in range(netns.SLOTS):
        plan = netns.Plan(slot)
        singles = [plan.host, plan.inside, plan.control_plane_gateway,
                   *(plan.gateway(i) for i in range(netns.MAX_CLUSTERS))]
        nets = [ipaddress.ip_network(plan.node_pods(i, j))
                for i in range(netns.MAX_CLUSTERS) for j in range(netns.NODES_PER_CLUSTER)]
        assert all(ipaddress.ip_address(a) in test_net for a in singles)
        assert all(n.subnet_of(ipaddress.ip_network(plan.pods)) for n in nets)
        assert ipaddress.ip_network(plan.pods).subnet_of(test_net)
        for n in nets:
            assert not any(n.overlaps(o) for o in seen)
            seen.add(n)
        assert len(set(singles)) == len(singles)
    with pytest.raises(netns.NetnsError):
        netns.Plan(0).gateway(netns.MAX_CLUSTERS)


def test_names_fit_linux_interface_names_and_follow_the_state_folder(tmp_path):
    ns, host_end = netns.names(tmp_path / "a")
    assert len(host_end) <= 15 and ns.startswith("mplab-")
    assert netns.names(tmp_path / "a") == (ns, host_end) != netns.names(tmp_path / "b")


def _pod(args, image="vllm/vllm-openai:v0.23.0", phase="Running", ip="198.19.0.1"):
    return {"metadata": {"name": "p", "namespace": "n", "uid": "u"},
            "spec": {"containers": [{"name": "engine", "image": image, "args": args}]},
            "status": {"phase": phase, "podIP": ip,
                       "containerStatuses": [{"name": "engine", "image": image, "ready": False}]}}


def test_engine_ports_and_which_pods_get_an_engine():
    assert engines.engine_port(_pod(["--model=m"])) == (8000, True)
    assert engines.engine_port(_pod(["--model=m", "--port", "9000"])) == (9000, True)
    assert engines.wants_engine(_pod(["--model=m"]))
    assert not engines.wants_engine(_pod(["--model=m"], phase="Pending"))
    assert not engines.wants_engine(_pod(["--model=m"], ip=""))


def test_readiness_patch_keeps_the_container_statuses_kwok_wrote():
    patch = engines.readiness_patch(_pod([]), True, engines.READY, "ok", "now")
    assert {c["type"]: c["status"] for c in patch["status"]["conditions"]} == {"Ready": "True",
                                                                              "ContainersReady": "True"}
    assert patch["status"]["containerStatuses"] == [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                                                     "ready": True}]


def test_kwok_waits_for_the_engine_only_with_a_data_plane():
    def running(stages):
        return next(s for s in stages if s["metadata"]["name"] == "lab-pod-running")["spec"]["next"]["statusTemplate"]

    assert "{{ if true }}" in running(components.kwok_stages(engine_readiness=True))
    assert "{{ if false }}" in running(components.kwok_stages())
    assert "WAIT_FOR_ENGINE" not in running(components.kwok_stages())


class _Recording:
    def __init__(self, items):
        self.items, self.patched = items, []

    def get(self, path):
        return {"items": self.items.get(path.rsplit("/", 1)[-1], [])}

    def path_of(self, body, sub):
        return body["metadata"]["name"]

    def request(self, method, path, body, **_):
        self.patched.append(path)


def test_the_standin_leaves_traefiks_class_and_gateways_alone():
    meta = {"generation": 1}
    client = _Recording({
        "gatewayclasses": [{"metadata": {"name": dataplane.GATEWAY_CLASS, **meta}},
                           {"metadata": {"name": "envoy", **meta}}],
        "gateways": [{"metadata": {"name": "traefik-gw", "namespace": "n", **meta},
                      "spec": {"gatewayClassName": dataplane.GATEWAY_CLASS, "listeners": []}},
                     {"metadata": {"name": "envoy-gw", "namespace": "n", **meta},
                      "spec": {"gatewayClassName": "envoy", "listeners": []}}],
    })
    standin.sweep(client, 0)
    assert client.patched == ["envoy", "envoy-gw"]
