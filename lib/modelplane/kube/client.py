"""A small REST client for a local API server: just what tests and the lab need.

It speaks JSON over HTTPS with a client certificate, finds a kind's resource
through discovery, and returns the server's Status on failure as an
``ApiError`` whose ``causes`` carry the field paths the server reports
(``spec.replicas``), so they can be compared with ``modelplane validate``.
Server-side apply uses the ``application/apply-patch+yaml`` content type
(JSON is YAML), optionally as a dry run. Writes ask for strict field
validation (kubectl's default): an unknown field is an error, not pruned.
"""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelplane.kube import net

FIELD_MANAGER = "modelplane"


@dataclass(frozen=True)
class Cause:
    field: str
    message: str
    reason: str = ""


@dataclass
class ApiError(Exception):
    """A non-2xx answer: the HTTP code and the server's Status."""

    code: int
    reason: str
    message: str
    causes: list[Cause] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}"


@dataclass(frozen=True)
class Resource:
    """Where a kind lives: ``/apis/<group>/<version>`` (or ``/api/v1``), its plural, its scope."""

    base: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        parts = [self.base]
        if self.namespaced and namespace:
            parts += ["namespaces", namespace]
        parts.append(self.plural)
        if name:
            parts.append(name)
        if subresource:
            parts.append(subresource)
        return "/".join(parts)


def _base(api_version: str) -> str:
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


class Client:
    """HTTPS to ``server`` trusting ``ca``, authenticated by ``cert``/``key`` files or a bearer token.

    ``token_file`` is read on every call, not once: a pod's projected service-account
    token is rotated by the kubelet, and a program that kept the first one would be
    refused after it expires (the in-cluster way, as client-go's rest.InClusterConfig).
    """

    def __init__(self, server: str, ca: Path, cert: Path | None = None, key: Path | None = None,
                 timeout: float = 30.0, *, token_file: Path | None = None) -> None:
        self.server = server.rstrip("/")
        self.timeout = timeout
        self.token_file = token_file
        ctx = ssl.create_default_context(cafile=str(ca))
        if cert is not None and key is not None:
            ctx.load_cert_chain(str(cert), str(key))
        self._opener = net.opener(ctx)  # no proxy: see kube.net
        self._discovery: dict[str, dict[str, Resource]] = {}

    # ----- raw ---------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json",
                query: dict[str, str] | None = None) -> Any:
        """One call; the decoded JSON (or text) answer. Raises ApiError on 4xx/5xx."""
        url = self.server + path + (("?" + urllib.parse.urlencode(query)) if query else "")
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        if self.token_file is not None:
            headers["Authorization"] = "Bearer " + self.token_file.read_text().strip()
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(req, timeout=self.timeout) as rsp:
                return _decode(rsp.read())
        except urllib.error.HTTPError as err:
            raise _api_error(err.code, _decode(err.read())) from None

    def ready(self) -> bool:
        """GET /readyz answers ok."""
        try:
            return self.request("GET", "/readyz") == "ok"
        except ApiError:
            return False

    # ----- kinds ---------------------------------------------------------------
    def resource(self, api_version: str, kind: str) -> Resource:
        """Discovery for one kind; asks again once on a miss (a CRD may have just been served)."""
        for fresh in (False, True):
            if fresh or api_version not in self._discovery:
                self._discovery[api_version] = self._discover(api_version)
            found = self._discovery[api_version].get(kind)
            if found:
                return found
        raise ApiError(404, "NotFound", f"the server serves no kind {kind} in {api_version}")

    def _discover(self, api_version: str) -> dict[str, Resource]:
        base = _base(api_version)
        try:
            listing = self.request("GET", base)
        except ApiError as err:
            if err.code == 404:
                return {}
            raise
        return {r["kind"]: Resource(base, r["name"], bool(r.get("namespaced")))
                for r in listing.get("resources", []) if "/" not in r["name"]}

    def path_of(self, obj: dict, subresource: str | None = None, named: bool = True) -> str:
        """The object's URL path; a namespaced object without a namespace goes to ``default``, as with kubectl."""
        meta = obj.get("metadata") or {}
        res = self.resource(obj["apiVersion"], obj["kind"])
        namespace = meta.get("namespace") or ("default" if res.namespaced else None)
        return res.path(namespace, meta.get("name") if named else None, subresource)

    # ----- verbs ---------------------------------------------------------------
    def get(self, obj_or_path: dict | str) -> Any:
        return self.request("GET", obj_or_path if isinstance(obj_or_path, str) else self.path_of(obj_or_path))

    def create(self, obj: dict, *, dry_run: bool = False) -> dict:
        query = {"fieldValidation": "Strict"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("POST", self.path_of(obj, named=False), obj, query=query)

    def apply(self, obj: dict, *, dry_run: bool = False, subresource: str | None = None,
              field_manager: str = FIELD_MANAGER, force: bool = True) -> dict:
        """Server-side apply (``kubectl apply --server-side``)."""
        query = {"fieldManager": field_manager, "force": "true" if force else "false", "fieldValidation": "Strict"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("PATCH", self.path_of(obj, subresource), obj,
                            content_type="application/apply-patch+yaml", query=query)

    def replace(self, obj: dict, *, dry_run: bool = False, subresource: str | None = None) -> dict:
        """PUT: the object becomes exactly ``obj`` (which must carry the current resourceVersion)."""
        query = {"fieldValidation": "Strict"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("PUT", self.path_of(obj, subresource), obj, query=query)

    def delete(self, obj: dict) -> Any:
        return self.request("DELETE", self.path_of(obj))


def _decode(raw: bytes) -> Any:
    text = raw.decode(errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _api_error(code: int, body: Any) -> ApiError:
    if not isinstance(body, dict):
        return ApiError(code, "", str(body))
    details = body.get("details") or {}
    causes = [Cause(c.get("field", ""), c.get("message", ""), c.get("reason", ""))
              for c in details.get("causes") or []]
    return ApiError(code, body.get("reason", ""), body.get("message", ""), causes)
