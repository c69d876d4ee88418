"""How each lab program is started: command lines and the files they read (pure).

Per workload cluster: kube-controller-manager, kube-scheduler, kwok and the
LeaderWorkerSet controller, all reaching their cluster's kube-apiserver with
its admin kubeconfig, all serving health on 127.0.0.1 ports the caller picks.
Nothing here starts a process; ``lab.up`` does.

- kube-controller-manager runs its default controllers: Deployments and
  ReplicaSets, Jobs, ResourceClaims from templates, PV binding, garbage
  collection, node lifecycle (kwok keeps node leases fresh).
- kube-scheduler runs its default profile, which includes the DRA plugin
  (``DynamicResourceAllocation`` is GA and on by default from Kubernetes 1.34).
- kwok plays the kubelet of every Node annotated ``kwok.x-k8s.io/node=fake``
  with the stages below: nodes become Ready; a bound pod becomes Running and
  Ready; a Job's pod then Succeeds; a deleted pod goes away.
- the LWS controller runs out of cluster with its webhooks served on loopback
  (certificates from the lab CA, registered with ``clientConfig.url``), no
  leader election and no internal cert management.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

KWOK_NODE_SELECTOR = "kwok.x-k8s.io/node=fake"

# kwok stages: our own templates (kwok ships none in its binary; kwokctl adds its defaults).
# A stage's statusTemplate renders the fields of .status to set (Go templates, kwok's functions).
_NODE_READY = """\
{{ $now := Now }}
conditions:
- type: Ready
  status: "True"
  reason: KubeletReady
  message: kwok plays this node's kubelet (modelplane lab)
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
{{ range $t := list "MemoryPressure" "DiskPressure" "PIDPressure" "NetworkUnavailable" }}
- type: {{ $t }}
  status: "False"
  reason: KubeletHasNo{{ $t }}
  message: ""
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
addresses:
- type: InternalIP
  address: {{ NodeIP | Quote }}
- type: Hostname
  address: {{ NodeName | Quote }}
{{ with .status.capacity }}
capacity:
{{ YAML . 1 }}
{{ end }}
{{ with .status.allocatable }}
allocatable:
{{ YAML . 1 }}
{{ end }}
phase: Running
"""

_POD_RUNNING = """\
{{ $now := Now }}
phase: Running
startTime: {{ $now | Quote }}
{{ with NodeIPWith .spec.nodeName }}
hostIP: {{ . | Quote }}
hostIPs:
- ip: {{ . | Quote }}
{{ end }}
{{ with PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ . | Quote }}
podIPs:
- ip: {{ . | Quote }}
{{ end }}
{{ $wait := false }}
{{ if WAIT_FOR_ENGINE }}{{ range .spec.containers }}{{ if eq .name "engine" }}{{ $wait = true }}{{ end }}{{ end }}{{ end }}
conditions:
{{ range $t := list "Initialized" "PodReadyToStartContainers" }}
- type: {{ $t }}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
{{ range $t := list "ContainersReady" "Ready" }}
- type: {{ $t }}
{{ if $wait }}
  status: "False"
  reason: WaitingForEngine
  message: the lab's engine supervisor sets this from the engine's /health
{{ else }}
  status: "True"
{{ end }}
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
{{ range .spec.readinessGates }}
- type: {{ .conditionType | Quote }}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: {{ if and $wait (eq .name "engine") }}false{{ else }}true{{ end }}
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
{{ with .spec.initContainers }}
initContainerStatuses:
{{ range . }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  restartCount: 0
{{ if eq (or .restartPolicy "") "Always" }}
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ else }}
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
{{ end }}
{{ end }}
"""

_POD_SUCCEEDED = """\
{{ $now := Now }}
phase: Succeeded
conditions:
- type: Ready
  status: "False"
  reason: PodCompleted
  lastTransitionTime: {{ $now | Quote }}
- type: ContainersReady
  status: "False"
  reason: PodCompleted
  lastTransitionTime: {{ $now | Quote }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: false
  started: false
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
"""


def _stage(name: str, kind: str, match: list[dict], next_: dict) -> dict:
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": kind},
                 "selector": {"matchExpressions": match}, "next": next_},
    }


_NOT_DELETED = {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}
_NOT_READY = {"key": '.status.conditions.[] | select( .type == "Ready" ) | .status',
              "operator": "NotIn", "values": ["True"]}


def kwok_stages(engine_readiness: bool = False) -> list[dict]:
    """The lifecycle kwok plays: node ready; pod running; Job pod succeeded; deleted pod gone.
    With ``engine_readiness`` (the lab's data plane), a pod with a container named ``engine``
    starts Running but not Ready (reason ``WaitingForEngine``): the lab's engine supervisor sets
    ``Ready`` from the engine's ``/health``; no stage matches a Running pod, so kwok leaves it."""
    running = _POD_RUNNING.replace("WAIT_FOR_ENGINE", "true" if engine_readiness else "false")
    return [
        _stage("lab-node-ready", "Node", [_NOT_READY], {"statusTemplate": _NODE_READY}),
        _stage("lab-pod-running", "Pod", [
            _NOT_DELETED,
            {"key": ".status.phase", "operator": "In", "values": ["Pending", ""]},
            _NOT_READY,
        ], {"statusTemplate": running}),
        _stage("lab-pod-succeeded", "Pod", [
            _NOT_DELETED,
            {"key": ".status.phase", "operator": "In", "values": ["Running"]},
            {"key": ".metadata.ownerReferences.[].kind", "operator": "In", "values": ["Job"]},
        ], {"statusTemplate": _POD_SUCCEEDED}),
        _stage("lab-pod-gone", "Pod", [{"key": ".metadata.deletionTimestamp", "operator": "Exists"}],
               {"delete": True}),
    ]


def dump_all(docs: list[Mapping[str, Any]]) -> str:
    return yaml.safe_dump_all([dict(d) for d in docs], sort_keys=False)


# --- command lines ------------------------------------------------------------


def controller_manager(binary: Path, kubeconfig: Path, port: int, cert_dir: Path, sa_key: Path,
                       ca: Path) -> list[str]:
    return [
        str(binary), f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1", f"--secure-port={port}", f"--cert-dir={cert_dir}",
        "--leader-elect=false",
        # Tokens for service accounts and the kube-root-ca.crt ConfigMap each namespace gets.
        f"--service-account-private-key-file={sa_key}", f"--root-ca-file={ca}",
        "--use-service-account-credentials=false",
        # Fewer reconcile loops on a 2-core machine: the lab's objects change rarely.
        "--concurrent-deployment-syncs=2", "--concurrent-replicaset-syncs=2",
        "--profiling=false", "--v=1",
    ]


def scheduler(binary: Path, kubeconfig: Path, port: int, cert_dir: Path) -> list[str]:
    return [
        str(binary), f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1", f"--secure-port={port}", f"--cert-dir={cert_dir}",
        "--leader-elect=false", "--profiling=false", "--v=1",
    ]


def kwok(binary: Path, kubeconfig: Path, port: int, stages: Path, node_ip: str) -> list[str]:
    return [
        str(binary), f"--kubeconfig={kubeconfig}", f"--config={stages}",
        f"--manage-nodes-with-annotation-selector={KWOK_NODE_SELECTOR}",
        f"--server-address=127.0.0.1:{port}", f"--node-ip={node_ip}", "--cidr=10.0.0.1/16",
        "--node-lease-duration-seconds=40",
    ]


def lws(binary: Path, kubeconfig: Path, config: Path) -> list[str]:
    return [str(binary), f"--kubeconfig={kubeconfig}", f"--config={config}", "--zap-log-level=info"]


LWS_ENV = {"ENABLE_WEBHOOKS": "true"}


# --- LeaderWorkerSet out of cluster ---------------------------------------------


def lws_config(webhook_port: int, health_port: int, cert_dir: Path) -> dict:
    """The controller's Configuration: loopback webhook with our certificate, no leader election."""
    return {
        "apiVersion": "config.lws.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(cert_dir)},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": "0"},
    }


LWS_LABEL = "leaderworkerset.sigs.k8s.io/name"
# The webhooks LWS registers (its config/webhook manifests): path, resource, operations.
_LWS_MUTATING = (
    ("mleaderworkerset.kb.io", "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
     "leaderworkerset.x-k8s.io", "leaderworkersets", ("CREATE", "UPDATE")),
    ("mpod.kb.io", "/mutate--v1-pod", "", "pods", ("CREATE",)),
)
_LWS_VALIDATING = (
    ("vleaderworkerset.kb.io", "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
     "leaderworkerset.x-k8s.io", "leaderworkersets", ("CREATE", "UPDATE")),
    ("vpod.kb.io", "/validate--v1-pod", "", "pods", ("CREATE", "UPDATE")),
)


def _webhooks(specs: tuple, port: int, ca_bundle: str) -> list[dict]:
    out = []
    for name, path, group, resource, ops in specs:
        hook: dict[str, Any] = {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca_bundle},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "timeoutSeconds": 10,
            "rules": [{"apiGroups": [group], "apiVersions": ["v1"], "operations": list(ops),
                       "resources": [resource]}],
        }
        if resource == "pods":
            # Only LWS pods: a stopped LWS controller must not block every other pod in the cluster.
            hook["objectSelector"] = {"matchExpressions": [{"key": LWS_LABEL, "operator": "Exists"}]}
        out.append(hook)
    return out


def lws_webhooks(port: int, ca_bundle: str) -> list[dict]:
    """Mutating and validating webhook configurations pointing at the controller on loopback."""
    return [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "lws-mutating-webhook-configuration"},
         "webhooks": _webhooks(_LWS_MUTATING, port, ca_bundle)},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "lws-validating-webhook-configuration"},
         "webhooks": _webhooks(_LWS_VALIDATING, port, ca_bundle)},
    ]


def disaggregatedset_stub() -> dict:
    """A schemaless DisaggregatedSet CRD. The LWS controller also runs a DisaggregatedSet
    controller and exits when that kind is not served; Modelplane never uses it, so the lab
    serves a stand-in instead of the 1.5 MB upstream schema (faster start-up)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "disaggregatedsets.disaggregatedset.x-k8s.io",
                     "annotations": {"modelplane.ai/lab": "stand-in: served so the LWS controller starts"}},
        "spec": {
            "group": "disaggregatedset.x-k8s.io",
            "scope": "Namespaced",
            "names": {"kind": "DisaggregatedSet", "listKind": "DisaggregatedSetList",
                      "plural": "disaggregatedsets", "singular": "disaggregatedset"},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }],
        },
    }
