"""The cases of test_upstream.py: composed resources of upstream kinds, valid
(each with where a misspelled field goes) and invalid. tests/upstream puts the
same cases before the API server and beta validate."""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def deployment() -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "qwen", "namespace": "ml-team", "labels": {"app": "qwen"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "qwen"}},
                     "template": {"metadata": {"labels": {"app": "qwen"}}, "spec": {"containers": [{
                         "name": "engine", "image": "vllm/vllm-openai:v0.9.0", "args": ["--port=8000"],
                         "ports": [{"containerPort": 8000, "name": "http"}],
                         "resources": {"limits": {"nvidia.com/gpu": 1, "memory": "16Gi", "cpu": 0.5}},
                         "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}}}]}}}}


def httproute() -> dict:
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "qwen", "namespace": "ml-team"},
            "spec": {"parentRefs": [{"name": "modelplane", "namespace": "modelplane-system"}],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/ml-team/qwen/"}}],
                                "filters": [{"type": "URLRewrite", "urlRewrite": {"path": {
                                    "type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
                                "backendRefs": [{"group": "gateway.envoyproxy.io", "kind": "Backend",
                                                 "name": "qwen-0", "weight": 1}]}]}}


def lws() -> dict:
    pod = {"spec": {"containers": [{"name": "engine", "image": "vllm", "env": [
        {"name": "MODELPLANE_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"}]}]}}
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "big", "namespace": "ml-team"},
            "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 3, "leaderTemplate": pod,
                                                             "workerTemplate": copy.deepcopy(pod)}}}


def backend() -> dict:
    return {"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "Backend",
            "metadata": {"name": "together", "namespace": "ml-team"},
            "spec": {"endpoints": [{"fqdn": {"hostname": "api.together.xyz", "port": 443}}]}}


def object_job() -> dict:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "hydrate", "namespace": "ml-team"},
           "spec": {"backoffLimit": 3, "template": {"spec": {"restartPolicy": "Never", "containers": [
               {"name": "hydrate", "image": "python:3.11", "command": ["python", "-c", "print(1)"]}]}}}}
    return {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
            "metadata": {"name": "hydrate-prod-a", "namespace": "ml-team"},
            "spec": {"forProvider": {"manifest": job},
                     "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "prod-a"}}}


def set_at(obj: dict, path: list[Any], value: Any) -> dict:
    node = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return obj


@dataclass
class Case:
    name: str
    build: Callable[[], dict]
    typo_at: list[Any]  # where a misspelled field is added
    want_path: str


CASES = [
    Case("Deployment", deployment, ["spec", "template", "spec", "containers", 0, "imagePullPolicyy"],
         "spec.template.spec.containers[0].imagePullPolicyy"),
    Case("HTTPRoute", httproute, ["spec", "rules", 0, "backendRefs", 0, "wieght"], "spec.rules[0].backendRefs[0].wieght"),
    Case("LeaderWorkerSet", lws, ["spec", "leaderWorkerTemplate", "sizee"], "spec.leaderWorkerTemplate.sizee"),
    Case("Backend", backend, ["spec", "endpoints", 0, "fqdn", "prot"], "spec.endpoints[0].fqdn.prot"),
    Case("Object wrapping a Job", object_job, ["spec", "forProvider", "manifest", "spec", "template", "spec",
                                               "restartPolicyy"],
         "spec.forProvider.manifest.spec.template.spec.restartPolicyy"),
]


@dataclass
class BadCase:
    name: str
    obj: dict
    want: str  # a substring of the one error


BAD = [
    BadCase("wrong type", set_at(deployment(), ["spec", "replicas"], "2"), "spec.replicas: Invalid value"),
    BadCase("required in swagger", set_at(deployment(), ["spec", "template", "spec", "containers", 0], {"image": "x"}),
            "spec.template.spec.containers[0].name: Required value"),
    BadCase("Service name is a DNS-1035 label", {"apiVersion": "v1", "kind": "Service",
                                                 "metadata": {"name": "1-svc"}, "spec": {"ports": [{"port": 80}]}},
            "metadata.name: Invalid value"),
    BadCase("Namespace name is a DNS label", {"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": "a.b"}}, "metadata.name: Invalid value"),
    BadCase("label value too long", set_at(deployment(), ["metadata", "labels", "app"], "x" * 64),
            "metadata.labels: Invalid value"),
    BadCase("quantity syntax", set_at(deployment(), ["spec", "template", "spec", "containers", 0, "resources",
                                                     "limits", "memory"], "16 gigs"),
            "resources.limits[memory]: Invalid value"),
    BadCase("CEL rule of an upstream CRD", set_at(httproute(), ["spec", "rules", 0, "filters"], [
        {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}},
        {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}]),
            "spec.rules[0].filters"),
    BadCase("Object embeds an unknown kind", set_at(object_job(), ["spec", "forProvider", "manifest", "kind"], "Jobb"),
            "spec.forProvider.manifest: could not find a schema"),
    BadCase("unknown kind", {"apiVersion": "example.org/v1", "kind": "Nope"}, "could not find CRD/XRD for"),
]
