"""What provider-kubernetes makes of one cluster's Objects: which remote objects exist, and why not.

Both stand-ins for provider-kubernetes (simulate's physical model and ``simulate --lab``) hand a
workload cluster the manifests its Objects carry. Real provider-kubernetes v1.2.1 does not apply
every one of them: it honours each Object's ``spec.managementPolicies`` and its
``spec.references``, and a stand-in that ignored them would show an impossible fleet as healthy
(an engine observer's ConfigMap that nothing created, a Secret copy that has no data). ``plan``
plays those rules over plain data:

- references first: a ``patchesFrom``/``dependsOn`` whose control-plane object is missing fails
  the Object's observe (``resolveReferencies``, ``internal/controller/namespaced/object/object.go``
  lines 376-381 and 688-717): ``Synced=False`` with crossplane-runtime's ``observe failed: ...``
  (``pkg/reconciler/managed/reconciler.go`` v2.0.0-rc.1 lines 1130-1131), and the Object applies
  nothing; a found one's field is patched into the manifest (``toFieldPath``);
- an absent remote object under ``["Observe"]`` alone is never created: ``Synced=False``,
  ``observe failed: external resource does not exist`` (reconciler.go lines 1136-1140); without
  ``Create`` (or ``*``) an Object creates nothing (line 1287), and it updates an existing object
  only with ``Update`` (line 1454);
- an Object no longer composed deletes its remote object only with ``Delete`` (line 972 skips
  the delete otherwise): the object is orphaned and stays (``KEEP_ON_DELETE`` namespaces).

Simplification: v1.2.1 may reach ``Update`` for an absent object whose policies hold Update but
not Create, and a server-side apply would then create it; Modelplane composes no such Object
without a creating sibling (``workloads.secrets``: the shell creates, the data Object fills), so
the model keeps the simpler rule that only ``Create`` creates.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.objects import manifest_key, manifest_of
from modelplane.physical.interface import RemoteKey

OBSERVE_FAILED = "observe failed"                              # crossplane-runtime errReconcileObserve
NOT_EXIST = "external resource does not exist"                 # crossplane-runtime errExternalResourceNotExist
RESOLVE = "cannot resolve resource references"                 # provider-kubernetes errResolveResourceReferences
GET_REFERENCED = "cannot get referenced resource"              # provider-kubernetes errGetReferencedResource

# The referenced object, or None when the control plane has none: (apiVersion, kind, namespace, name).
Lookup = Callable[[str, str, str, str], Mapping[str, Any] | None]


def policies(obj: Mapping[str, Any]) -> frozenset[str]:
    """An Object's management policies (``*`` when it names none, the API default)."""
    return frozenset((obj.get("spec") or {}).get("managementPolicies") or ["*"])


def may(obj: Mapping[str, Any], action: str) -> bool:
    """Whether ``obj``'s policies allow ``action`` (Create, Update, Delete)."""
    p = policies(obj)
    return "*" in p or action in p


def observe_only(obj: Mapping[str, Any]) -> bool:
    return policies(obj) == frozenset({"Observe"})


@dataclass
class Plan:
    """One cluster after the provider's pass: what it holds, and each failing Object's error."""

    held: dict[RemoteKey, dict] = field(default_factory=dict)      # remote objects that exist now
    deletes: dict[RemoteKey, bool] = field(default_factory=dict)   # per held key: deleted once no Object names it
    errors: dict[int, str] = field(default_factory=dict)           # index of the Object in the input -> Synced message


def _plural(kind: str) -> str:
    low = kind.lower()
    return low + ("es" if low.endswith("s") else "s")


def _resolve(obj: Mapping[str, Any], lookup: Lookup) -> tuple[dict, str]:
    """The Object's manifest with its references patched in, or the error that stops it."""
    manifest = copy.deepcopy(dict(manifest_of(obj)))
    namespace = (obj.get("metadata") or {}).get("namespace", "")
    for ref in (obj.get("spec") or {}).get("references") or []:
        source = ref.get("patchesFrom") or ref.get("dependsOn")
        if not source:
            continue
        api, kind = source.get("apiVersion", ""), source.get("kind", "")
        ns, name = source.get("namespace") or namespace, source.get("name", "")
        found = lookup(api, kind, ns, name)
        if found is None:
            # The API server's NotFound text, as kerrors formats it, wrapped as the provider does.
            return manifest, f'{OBSERVE_FAILED}: {RESOLVE}: {GET_REFERENCED}: {_plural(kind)} "{name}" not found'
        path = (ref.get("patchesFrom") or {}).get("fieldPath")
        if path:
            value = _get(found, path)
            if value is not None:
                _set(manifest, ref.get("toFieldPath") or path, copy.deepcopy(value))
    return manifest, ""


def _get(obj: Mapping[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def _set(obj: dict, path: str, value: Any) -> None:
    parts = path.split(".")
    cur = obj
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


def _merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict:
    """``update`` applied over ``base`` the way a server-side apply of it merges maps."""
    out = copy.deepcopy(dict(base))
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def plan(objects: Iterable[Mapping[str, Any]], before: Plan, lookup: Lookup) -> Plan:
    """What the cluster holds after provider-kubernetes reconciles ``objects`` once.

    ``before`` is the previous pass (``Plan()`` for a new cluster); ``lookup`` answers
    for the control plane's referenced objects. Objects are taken creators first, then in the
    order given, so a sibling that only updates sees the object its creator made this pass.
    """
    objs = list(objects)
    held = before.held
    out = Plan()
    named: set[RemoteKey] = set()
    order = sorted(range(len(objs)), key=lambda i: not may(objs[i], "Create"))
    for i in order:
        obj = objs[i]
        key = manifest_key(manifest_of(obj))
        named.add(key)
        manifest, error = _resolve(obj, lookup)
        exists = key in out.held or key in held
        if not error and not exists and observe_only(obj):
            error = f"{OBSERVE_FAILED}: {NOT_EXIST}"
        if error:
            out.errors[i] = error
            if exists and key not in out.held:
                out.held[key] = dict(held[key])
        elif not exists:
            if may(obj, "Create"):
                out.held[key] = manifest
        elif may(obj, "Update"):
            out.held[key] = _merge(out.held.get(key) or held[key], manifest)
        elif key not in out.held:
            out.held[key] = dict(held[key])
        if key in out.held:
            out.deletes[key] = out.deletes.get(key, False) or may(obj, "Delete")
    # Remote objects no Object names any more: gone when the last Object naming them could delete.
    for key, manifest in held.items():
        if key not in named and not before.deletes.get(key, True):
            out.held[key] = dict(manifest)
            out.deletes[key] = False
    return out
