"""physical.provider: what provider-kubernetes v1.2.1 leaves on a cluster, policies and references honoured."""
from __future__ import annotations

from dataclasses import dataclass, field

from modelplane.objects import remote_object
from modelplane.physical import provider

CM = ("ConfigMap", "ml-team", "report")
SECRET = ("Secret", "ml-team", "copy")


def obj(kind: str, name: str, policies: tuple[str, ...] | None = None, refs: list | None = None) -> dict:
    manifest = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "ml-team"}}
    o = remote_object(name, manifest, "east", namespace="ml-team", management_policies=policies)
    if refs:
        o["spec"]["references"] = refs
    return o


PATCH = [{"patchesFrom": {"apiVersion": "v1", "kind": "Secret", "name": "huggingface", "namespace": "ml-team",
                          "fieldPath": "data"}, "toFieldPath": "data"}]
CONTROL_PLANE = {("Secret", "ml-team", "huggingface"): {"data": {"token": "aGY="}}}


def lookup(api: str, kind: str, ns: str, name: str):
    return CONTROL_PLANE.get((kind, ns, name))


@dataclass
class Case:
    name: str
    objects: list
    before: provider.Plan = field(default_factory=provider.Plan)
    want_held: dict = field(default_factory=dict)     # key -> data (None: no data)
    want_errors: dict = field(default_factory=dict)   # index -> message


CASES = [
    Case("observe only, absent: nothing created, not synced", [obj("ConfigMap", "report", ("Observe",))],
         want_errors={0: "observe failed: external resource does not exist"}),
    Case("observe only, present: kept as it is, synced",
         [obj("ConfigMap", "report", ("Observe",))],
         before=provider.Plan(held={CM: {"kind": "ConfigMap", "data": {"a": "1"}}}, deletes={CM: False}),
         want_held={CM: {"a": "1"}}),
    Case("no Create: absent stays absent", [obj("Secret", "copy", ("Observe", "Update"), PATCH)]),
    Case("shell creates, data Object fills from the control plane",
         [obj("Secret", "copy", ("Observe", "Update"), PATCH), obj("Secret", "copy", ("Observe", "Create", "Delete"))],
         want_held={SECRET: {"token": "aGY="}}),
    Case("missing reference: the Object fails, applies nothing",
         [obj("Secret", "copy", ("Observe", "Create", "Delete")),
          obj("Secret", "copy", ("Observe", "Update"), [{**PATCH[0], "patchesFrom": {
              **PATCH[0]["patchesFrom"], "name": "absent"}}])],
         want_held={SECRET: None},
         want_errors={1: 'observe failed: cannot resolve resource references: cannot get referenced resource: '
                         'secrets "absent" not found'}),
    Case("no Update: an existing object keeps its content", [obj("Secret", "copy", ("Observe", "Create", "Delete"))],
         before=provider.Plan(held={SECRET: {"kind": "Secret", "data": {"old": "1"}}}, deletes={SECRET: True}),
         want_held={SECRET: {"old": "1"}}),
    Case("gone, its Object could delete: deleted", [],
         before=provider.Plan(held={SECRET: {"kind": "Secret"}}, deletes={SECRET: True})),
    Case("gone, its Object could not delete: orphaned", [],
         before=provider.Plan(held={CM: {"kind": "ConfigMap"}}, deletes={CM: False}), want_held={CM: None}),
    Case("no policies means all", [obj("ConfigMap", "report")], want_held={CM: None}),
]


def test_plan():
    for case in CASES:
        got = provider.plan(case.objects, case.before, lookup)
        held = {k: m.get("data") for k, m in got.held.items()}
        assert (held, got.errors) == (case.want_held, case.want_errors), case.name
