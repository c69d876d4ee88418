"""Turn the pipeline's final desired state into render's output objects.

- Composed resources keep the observed naming (name, generateName and
  namespace of an observed resource with the same composition-resource-name;
  an empty value deletes the field), get ``generateName: <prefix>-`` when
  nameless, the XR's namespace when it is namespaced, the
  composition-resource-name annotation, the ``crossplane.io/composite``
  label (plus claim labels) and a controller owner reference. They sort by
  composition-resource-name.
- The XR is the desired composite (status, as functions wrote it) with the
  input's apiVersion, kind, name and namespace, a Ready condition derived
  from readiness, then the functions' non-system conditions with set
  semantics. Every lastTransitionTime is 2024-01-01T00:00:00Z; there is no
  Synced condition.
"""
from __future__ import annotations

import copy
from typing import Any

from modelplane.render.errors import RenderError

ANNOTATION_RESOURCE_NAME = "crossplane.io/composition-resource-name"
LABEL_COMPOSITE = "crossplane.io/composite"
LABEL_CLAIM_NAME = "crossplane.io/claim-name"
LABEL_CLAIM_NAMESPACE = "crossplane.io/claim-namespace"
CONDITION_TIME = "2024-01-01T00:00:00Z"
SYSTEM_CONDITIONS = frozenset({"Ready", "Synced", "Healthy", "UpToDate", "Responsive"})
FIRST_N = 3


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _set_meta(obj: dict, key: str, value: Any) -> None:
    """unstructured.SetX: an empty value removes the field."""
    if value:
        obj.setdefault("metadata", {})[key] = value
    elif isinstance(obj.get("metadata"), dict):
        obj["metadata"].pop(key, None)


def first_n_and_some_more(names: list[str], n: int = FIRST_N) -> str:
    """Sorted names: "a", "a, b", "a, b, and c", "a, b, c, and 2 more"."""
    names = sorted(names)
    if len(names) > n:
        return f"{', '.join(names[:n])}, and {len(names) - n} more"
    if len(names) == n:
        return f"{', '.join(names[:-1])}, and {names[-1]}"
    return ", ".join(names)


def claim_labels(xr: dict) -> dict[str, str]:
    labels = _meta(xr).get("labels") or {}
    if labels.get(LABEL_CLAIM_NAME) and labels.get(LABEL_CLAIM_NAMESPACE):
        return {LABEL_CLAIM_NAMESPACE: labels[LABEL_CLAIM_NAMESPACE], LABEL_CLAIM_NAME: labels[LABEL_CLAIM_NAME]}
    ref = (xr.get("spec") or {}).get("claimRef")
    if isinstance(ref, dict):
        return {LABEL_CLAIM_NAMESPACE: ref.get("namespace", ""), LABEL_CLAIM_NAME: ref.get("name", "")}
    return {}


def composed_metadata(cd: dict, xr: dict, name: str, observed: dict | None) -> dict:
    """One desired composed resource with render's metadata applied (a new object).

    Only ``metadata`` is changed, and only by replacing its values, so the rest
    is shared with ``cd`` rather than copied (a simulation renders thousands
    of these)."""
    meta_in = cd.get("metadata")
    cd = {**cd, "metadata": dict(meta_in)} if isinstance(meta_in, dict) else copy.deepcopy(cd)
    if observed is not None:
        for key in ("namespace", "name", "generateName"):
            _set_meta(cd, key, _meta(observed).get(key, ""))
    xr_meta = _meta(xr)
    prefix = (xr_meta.get("labels") or {}).get(LABEL_COMPOSITE) or xr_meta.get("name", "")
    meta = cd.setdefault("metadata", {})
    if not meta.get("name") and not meta.get("generateName"):
        meta["generateName"] = f"{prefix}-"
    if xr_meta.get("namespace"):
        meta["namespace"] = xr_meta["namespace"]
    meta["annotations"] = {**(meta.get("annotations") or {}), ANNOTATION_RESOURCE_NAME: name}
    meta["labels"] = {**(meta.get("labels") or {}), LABEL_COMPOSITE: prefix, **claim_labels(xr)}

    uid = xr_meta.get("uid", "")
    ref = {
        "apiVersion": xr.get("apiVersion", ""),
        "kind": xr.get("kind", ""),
        "name": xr_meta.get("name", ""),
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    refs = list(meta.get("ownerReferences") or [])
    for existing in refs:
        if existing.get("controller") is True and existing.get("uid", "") != uid:
            raise RenderError(
                f'cannot render composed resource "{name}" metadata: cannot set composite resource '
                f'"{xr_meta.get("name", "")}" as controller ref of composed resource: {meta.get("name", "")} '
                f'is already controlled by {existing.get("kind", "")} {existing.get("name", "")} '
                f'(UID {existing.get("uid", "")})'
            )
    for i, existing in enumerate(refs):
        if existing.get("uid", "") == uid:
            refs[i] = ref
            break
    else:
        refs.append(ref)
    meta["ownerReferences"] = refs
    return cd


def _condition(typ: str, status: str, reason: str, message: str = "") -> dict:
    cond = {"type": typ, "status": status, "lastTransitionTime": CONDITION_TIME, "reason": reason}
    if message:
        cond["message"] = message
    return cond


def _same(a: dict, b: dict) -> bool:
    keys = ("type", "status", "reason", "message", "observedGeneration")
    return all(a.get(k) == b.get(k) for k in keys)


def set_conditions(obj: dict, *conditions: dict) -> None:
    """ConditionedStatus.SetConditions: same type replaces in place, else appends."""
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    current = list(status.get("conditions") or [])
    for cond in conditions:
        for i, existing in enumerate(current):
            if existing.get("type") == cond["type"]:
                if not _same(existing, cond):
                    current[i] = cond
                break
        else:
            current.append(cond)
    status["conditions"] = current


def ready_condition(composite_ready: str, unready: list[str]) -> dict:
    """The XR's Ready condition from the composite's and resources' readiness."""
    if composite_ready == "FALSE":
        return _condition("Ready", "False", "Creating")
    if composite_ready == "UNSPECIFIED" and unready:
        return _condition("Ready", "False", "Creating", f"Unready resources: {first_n_and_some_more(unready)}")
    return _condition("Ready", "True", "Available")


def composite(desired: dict, xr: dict, composite_ready: str, unready: list[str], conditions: list[dict]) -> dict:
    """The rendered XR, before any -x copying."""
    out = copy.deepcopy(desired)
    out["apiVersion"] = xr.get("apiVersion", "")
    out["kind"] = xr.get("kind", "")
    _set_meta(out, "name", _meta(xr).get("name", ""))
    _set_meta(out, "namespace", _meta(xr).get("namespace", ""))
    set_conditions(out, ready_condition(composite_ready, unready))
    for cond in conditions:
        if cond["type"] not in SYSTEM_CONDITIONS:
            set_conditions(out, cond)
    return out


def full_xr(rendered: dict, xr: dict) -> dict:
    """``-x``: the input's spec and metadata copied over the rendered XR."""
    if "spec" not in xr:
        raise RenderError("cannot get composite resource spec: spec: no such field")
    out = copy.deepcopy(rendered)
    out["spec"] = copy.deepcopy(xr["spec"])
    if "metadata" not in xr:
        raise RenderError("cannot get composite resource metadata: metadata: no such field")
    out["metadata"] = copy.deepcopy(xr["metadata"])
    return out


def function_condition(typ: str, status: str, reason: str, message: str) -> dict:
    return _condition(typ, status, reason, message)
