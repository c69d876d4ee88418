"""AKS node pool names from Modelplane pool names.

AKS takes a Linux node pool name of 1 to 12 lower-case letters and digits,
starting with a letter. A pool name that already is one is used as it is;
any other (``h100-ib-pool-east``) becomes its letters and digits cut to 8,
plus 4 hex digits of the SHA-256 of the whole name (``h100ibpo3f2a``): the
same name always maps the same way, and names that share a beginning still
differ. Two pools that would still land on one name (or on the system
pool's) are refused, naming both.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from modelplane.errors import InputError

MAX = 12
HASH = 4
SYSTEM_POOL = "system"
_VALID = re.compile(rf"[a-z][a-z0-9]{{0,{MAX - 1}}}")


def pool_name(name: str) -> str:
    """The AKS node pool name for Modelplane pool ``name`` (stable, valid)."""
    if _VALID.fullmatch(name):
        return name
    letters = re.sub(r"[^a-z0-9]", "", name.lower())
    if not letters[:1].isalpha():
        letters = "p" + letters  # AKS names start with a letter
    digest = hashlib.sha256(name.encode()).hexdigest()[:HASH]
    return letters[: MAX - HASH] + digest


def check_unique(names: Iterable[tuple[str, str]]) -> None:
    """Refuse two pools ((field, pool name) pairs) that map onto one AKS name, or onto the system pool's."""
    seen = {SYSTEM_POOL: f"the AKS system pool {SYSTEM_POOL!r}"}
    for field, name in names:
        aks = pool_name(name)
        if aks in seen:
            raise InputError(f"{field}.name",
                             f"pool {name!r} and {seen[aks]} both map to the AKS node pool name {aks!r} "
                             f"(lower-case letters and digits, at most {MAX}); rename one of them")
        seen[aks] = f"pool {name!r} ({field})"
