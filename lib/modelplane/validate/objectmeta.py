"""ObjectMeta checks the API server does for every object, whatever its schema.

A CRD's schema may only constrain ``metadata.name``/``generateName``; the rest of
``metadata`` is validated by the API server as ObjectMeta. We do the same here:
known keys only, the right JSON types, and the name / label / annotation syntax
(DNS-1123 subdomain or label, DNS-1035 label, qualified names, 63-char values).
"""
from __future__ import annotations

import re
from collections.abc import Callable

from .finding import Problem, child, entry, index, show

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

_STRING_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                  "creationTimestamp", "deletionTimestamp")
_INT_FIELDS = ("generation", "deletionGracePeriodSeconds")
KNOWN_FIELDS = frozenset(_STRING_FIELDS + _INT_FIELDS + (
    "labels", "annotations", "ownerReferences", "finalizers", "managedFields"))


def dns1123_label(value: str) -> str | None:
    """None when ``value`` is a DNS-1123 label, else why not."""
    if len(value) > 63:
        return f"must be no more than 63 characters (has {len(value)})"
    if not _DNS1123_LABEL.fullmatch(value):
        return ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                "and must start and end with an alphanumeric character")
    return None


def dns1123_subdomain(value: str) -> str | None:
    """None when ``value`` is a DNS-1123 subdomain, else why not."""
    if len(value) > 253:
        return f"must be no more than 253 characters (has {len(value)})"
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character")
    return None


def dns1035_label(value: str) -> str | None:
    """None when ``value`` is a DNS-1035 label (Service names), else why not."""
    if len(value) > 63:
        return f"must be no more than 63 characters (has {len(value)})"
    if not _DNS1035_LABEL.fullmatch(value):
        return ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character")
    return None


def path_segment(value: str) -> str | None:
    """None when ``value`` is a valid path-segment name (RBAC objects), else why not."""
    if value in (".", ".."):
        return f"may not be {value!r}"
    for bad in ("/", "%"):
        if bad in value:
            return f"may not contain {bad!r}"
    return None


def qualified_name(value: str) -> str | None:
    """None when ``value`` is a label/annotation key (``[prefix/]name``), else why not."""
    prefix, _, name = value.rpartition("/")
    if "/" in value and not prefix:
        return "prefix part must be non-empty"
    if prefix and (why := dns1123_subdomain(prefix)):
        return f"prefix part {why}"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return f"name part must be no more than 63 characters (has {len(name)})"
    if not _QUALIFIED_NAME.fullmatch(name):
        return ("name part must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character")
    return None


def label_value(value: str) -> str | None:
    """None when ``value`` is a valid label value, else why not."""
    if len(value) > 63:
        return f"must be no more than 63 characters (has {len(value)})"
    if not _LABEL_VALUE.fullmatch(value):
        return ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character")
    return None


# Name syntax per kind, as the API server checks it; everything else is a subdomain.
NAME_RULES: dict[tuple[str, str], Callable[[str], str | None]] = {
    ("v1", "Namespace"): dns1123_label,
    ("v1", "Service"): dns1035_label,
    ("rbac.authorization.k8s.io/v1", "Role"): path_segment,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): path_segment,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): path_segment,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): path_segment,
}


def check(meta: object, path: str = "metadata", *, api_version: str = "", kind: str = "") -> list[Problem]:
    """Validate an ObjectMeta value; ``api_version``/``kind`` pick the name rule."""
    if not isinstance(meta, dict):
        return [Problem(path, f"Invalid value: {show(meta)}: must be of type object")]
    out: list[Problem] = []
    for key, value in meta.items():
        at = child(path, key)
        if key not in KNOWN_FIELDS:
            out.append(Problem(at, f'unknown field "{key}"'))
        elif key in _STRING_FIELDS and not isinstance(value, str):
            out.append(Problem(at, f"Invalid value: {show(value)}: must be of type string"))
        elif key in _INT_FIELDS and (isinstance(value, bool) or not isinstance(value, int)):
            out.append(Problem(at, f"Invalid value: {show(value)}: must be of type integer"))
    name_rule = NAME_RULES.get((api_version, kind), dns1123_subdomain)
    name = meta.get("name")
    if isinstance(name, str) and (why := name_rule(name)):
        out.append(Problem(child(path, "name"), f"Invalid value: {show(name)}: {why}"))
    generate = meta.get("generateName")
    # The server appends 5 random characters to generateName; check the prefix's shape.
    if isinstance(generate, str) and generate and (why := name_rule(generate.rstrip("-") or "x")):
        out.append(Problem(child(path, "generateName"), f"Invalid value: {show(generate)}: {why}"))
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace and (why := dns1123_label(namespace)):
        out.append(Problem(child(path, "namespace"), f"Invalid value: {show(namespace)}: {why}"))
    out += _string_map(meta.get("labels"), child(path, "labels"), label_value)
    out += _string_map(meta.get("annotations"), child(path, "annotations"), None)
    out += _string_list(meta.get("finalizers"), child(path, "finalizers"))
    out += _owner_refs(meta.get("ownerReferences"), child(path, "ownerReferences"))
    return out


def _string_map(value: object, path: str, value_rule: Callable[[str], str | None] | None) -> list[Problem]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [Problem(path, f"Invalid value: {show(value)}: must be of type object")]
    # Kubernetes reports a bad key or value at the map itself (metadata.labels), showing the
    # offending text; only a value that is not a string is placed at its key.
    out = []
    for key, item in value.items():
        if why := qualified_name(str(key)):
            out.append(Problem(path, f"Invalid value: {show(key)}: {why}"))
        if not isinstance(item, str):
            out.append(Problem(entry(path, key), f"Invalid value: {show(item)}: must be of type string (quote it "
                                                 "in YAML)"))
        elif value_rule and (why := value_rule(item)):
            out.append(Problem(path, f"Invalid value: {show(item)}: {why}"))
    return out


def _string_list(value: object, path: str) -> list[Problem]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [Problem(path, f"Invalid value: {show(value)}: must be of type array")]
    return [Problem(index(path, i), f"Invalid value: {show(v)}: must be of type string")
            for i, v in enumerate(value) if not isinstance(v, str)]


_OWNER_REF_FIELDS = {"apiVersion": str, "kind": str, "name": str, "uid": str,
                     "controller": bool, "blockOwnerDeletion": bool}


def _owner_refs(value: object, path: str) -> list[Problem]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [Problem(path, f"Invalid value: {show(value)}: must be of type array")]
    out = []
    for i, ref in enumerate(value):
        at = index(path, i)
        if not isinstance(ref, dict):
            out.append(Problem(at, f"Invalid value: {show(ref)}: must be of type object"))
            continue
        for key in ("apiVersion", "kind", "name", "uid"):
            if key not in ref:
                out.append(Problem(child(at, key), "Required value"))
        for key, item in ref.items():
            want = _OWNER_REF_FIELDS.get(key)
            if want is None:
                out.append(Problem(child(at, key), f'unknown field "{key}"'))
            elif not isinstance(item, want):
                out.append(Problem(child(at, key), f"Invalid value: {show(item)}: must be of type "
                                                   f"{'boolean' if want is bool else 'string'}"))
    return out
