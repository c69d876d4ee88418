"""docs/platform/install.md, run: a platform engineer's install against real Crossplane core v2.3 and
a local registry (``make install-test``; the session is in conftest.py).

In order, on one control plane: the page's ``# needs: install`` blocks (push to "their" registry,
the ImageConfig that points Crossplane there, the providers with their runtime configs, the
Configuration); where every package came from; the flags the providers run with; and what the
shipped provider-kubernetes runtime config is for: a Secret copied to a workload cluster's
kube-apiserver with ``references[].patchesFrom`` (as ModelCache tokens and replicas' Secrets are)
arrives there, while its Object's status carries no secret data, and would without the flag;
and a ModelCache's token moving from the single Object of earlier releases to the two of
``modelplane.secretcopy`` without the remote Secret going away.
"""
from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path

import pytest
from modelplane import paths

from tests.docs import pages
from tests.docs.runner import block_env, run_marked_blocks, scratch_copy

pytestmark = [pytest.mark.slow, pytest.mark.install]

PAGE = "platform/install.md"
FUNCTIONS = sorted(f"modelplane-{p.name}" for p in paths.FUNCTIONS.iterdir() if (p / "package").is_dir())
KUBERNETES = "crossplane-contrib-provider-kubernetes"
HELM = "crossplane-contrib-provider-helm"
SHIPPED = {KUBERNETES: ["--sanitize-secrets", "--enable-watches", "--poll=1m"], HELM: ["--poll=1m"]}
TEAM = "ml-team"
COPY = "hf-token"
PROVIDER_CONFIG = "workload"
OBJECT_FINALIZER = "finalizer.managedresource.crossplane.io"   # provider-kubernetes' objFinalizerName


def _page() -> pages.Page:
    return next(p for p in pages.pages() if p.name == PAGE)


def test_the_page_has_install_commands():
    blocks = [f for f, _ in _page().runnable() if f.needs == "install"]
    assert len(blocks) >= 4, [f.body.splitlines()[:2] for f in blocks]


def _block_env(install, scratch: Path) -> dict[str, str]:
    from modelplane.e2e import upstream
    tools = scratch / ".install-bin"
    tools.mkdir()
    for name in ("kubectl", "crossplane"):
        (tools / name).symlink_to(upstream.binary(name))
    env = block_env(scratch, install.state / "lab")
    env["PATH"] = f"{tools}:{env['PATH']}"
    env["KUBECONFIG"] = str(install.kubeconfig)
    env["REGISTRY"] = install.registry
    # The local registry asks for no credentials; Crossplane still reads the pull secret.
    env["REGISTRY_USER"], env["REGISTRY_PASSWORD"] = "platform-ci", "not-a-password"
    return env


def test_the_pages_install_commands_run(install, tmp_path):
    from modelplane.e2e import controlplane
    scratch = scratch_copy(tmp_path / "repo")
    (scratch / "_output").symlink_to(controlplane.xpkg_dir())   # make xpkg's packages (make install-test)
    env = _block_env(install, scratch)
    page = _page()
    assert run_marked_blocks(page, "install", scratch, env) >= 4


def test_modelplane_came_from_their_registry_under_its_own_names(install):
    cfg = install.get("configuration", "modelplane")
    assert cfg["spec"]["package"] == "xpkg.crossplane.io/modelplane/modelplane:v0.1.0"
    assert cfg["status"]["resolvedPackage"].startswith(f"{install.registry}/modelplane:"), cfg["status"]
    functions = {f["metadata"]["name"]: f for f in install.get("functions")["items"]}
    assert sorted(functions) == FUNCTIONS   # the names the Compositions' functionRefs call
    for name, fn in functions.items():
        assert fn["status"]["resolvedPackage"].startswith(f"{install.registry}/compose-"), (name, fn["status"])
    running = install.runtime()
    for name in FUNCTIONS:
        assert running[name]["image"].startswith(f"{install.registry}/"), running[name]


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_the_providers_run_with_the_shipped_runtime_configs(install):
    providers = install.get("providers")["items"]
    by_source = {}
    for p in providers:
        by_source.setdefault(p["spec"]["package"].rsplit(":", 1)[0], []).append(p["metadata"]["name"])
    # The Configuration found the providers installed and created no second one of each.
    assert by_source["xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"] == [KUBERNETES]
    assert by_source["xpkg.crossplane.io/crossplane-contrib/provider-helm"] == [HELM]
    running = install.runtime()
    for name, flags in SHIPPED.items():
        provider = next(p for p in providers if p["metadata"]["name"] == name)
        assert provider["spec"]["runtimeConfigRef"]["name"] == name.removeprefix("crossplane-contrib-")
        argv = _cmdline(running[name]["pid"])
        assert all(f in argv for f in flags), (name, argv)
        flags_given = [a.split("=")[0] for a in argv[1:] if a]
        assert len(set(flags_given)) == len(flags_given), f"a flag given twice: {argv}"


@pytest.fixture(scope="module")
def workload(install):
    """A workload cluster's kube-apiserver (its own etcd), registered on the control plane as a
    provider-kubernetes ClusterProviderConfig, with the ML team's namespace."""
    from modelplane.kube import APIServer, Etcd
    etcd = Etcd(install.state / "workload-etcd")
    api = APIServer(install.state / "workload", etcd.endpoint, name="workload")
    try:
        install.kubectl("create", "namespace", TEAM, kubeconfig=api.kubeconfig)
        install.kubectl("create", "namespace", TEAM)
        install.apply({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                       "metadata": {"name": "workload-kubeconfig", "namespace": "modelplane-system"},
                       "stringData": {"kubeconfig": Path(api.kubeconfig).read_text()}})
        install.apply({"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "ClusterProviderConfig",
                       "metadata": {"name": PROVIDER_CONFIG},
                       "spec": {"credentials": {"source": "Secret", "secretRef": {
                           "namespace": "modelplane-system", "name": "workload-kubeconfig", "key": "kubeconfig"}}}})
        yield api
    finally:
        api.process.stop()
        etcd.stop()


def _token(install, value: str) -> None:
    install.apply({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                   "metadata": {"name": COPY, "namespace": TEAM}, "stringData": {"token": value}})


def _copy_object(name: str = f"{COPY}-copy", remote: str = COPY, *, reference: bool = True,
                 policies: list[str] | None = None) -> dict:
    """The Object a replica composes for a Secret its pods read (lib/modelplane/workloads/secrets.py):
    no value is composed; provider-kubernetes patches the control-plane Secret's data in."""
    spec: dict = {"watch": True,
                  "forProvider": {"manifest": {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                               "metadata": {"name": remote, "namespace": TEAM}}},
                  "providerConfigRef": {"kind": "ClusterProviderConfig", "name": PROVIDER_CONFIG},
                  "readiness": {"policy": "SuccessfulCreate"}}
    if reference:
        spec["references"] = [{"patchesFrom": {"apiVersion": "v1", "kind": "Secret", "name": COPY,
                                               "namespace": TEAM, "fieldPath": "data"},
                               "toFieldPath": "data"}]
    if policies:
        spec["managementPolicies"] = policies
    return {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
            "metadata": {"name": name, "namespace": TEAM}, "spec": spec}


def _remote_value(install, workload, name: str = COPY) -> str | None:
    out = install.kubectl("-n", TEAM, "get", "secret", name, "-o", "json", kubeconfig=workload.kubeconfig,
                          check=False)
    data = (json.loads(out).get("data") or {}) if out.strip() else {}
    return base64.b64decode(data["token"]).decode() if "token" in data else None


def _b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


def _object(install, name: str = f"{COPY}-copy") -> dict:
    return install.get("-n", TEAM, "object.kubernetes.m.crossplane.io", name)


def _status_data(obj: dict) -> dict:
    return (((obj.get("status") or {}).get("atProvider") or {}).get("manifest") or {}).get("data") or {}


def _paths_with(node, needles: tuple[str, ...], at: str = "") -> list[str]:
    """Where in ``node`` (a parsed object) a string holds any of ``needles``."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _paths_with(v, needles, f"{at}.{k}")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _paths_with(v, needles, f"{at}[{i}]")]
    return [at] if isinstance(node, str) and any(n in node for n in needles) else []


def test_a_copied_secret_reaches_the_workload_cluster_and_no_status_carries_it(install, workload):
    value = "hf_" + secrets.token_hex(16)
    _token(install, value)
    install.apply(_copy_object())
    install.wait("the Secret on the workload cluster", lambda: _remote_value(install, workload) == value or
                 f"remote value {_remote_value(install, workload)!r}")
    obj = install.wait("the Object's observed manifest", lambda: _status_data(_object(install)) and _object(install))
    needles = (value, _b64(value))
    assert _paths_with(obj.get("status"), needles) == [], json.dumps(obj, indent=1)[-6000:]
    assert all(v in (None, "") for v in _status_data(obj).values()), _status_data(obj)
    # What the flag does not cover: on its first reconcile provider-kubernetes v1.2.1 writes the
    # Object back whole, with the data its reference patched in, to add its finalizer (object.go
    # 814-826, after Observe: crossplane-runtime v2.0.0-rc.1 pkg/reconciler/managed/reconciler.go:1272)
    # and before creating the remote object (:1287-1297). install.md says so; if this fails,
    # upstream changed: update the page.
    assert _paths_with(obj.get("spec"), needles) == [".forProvider.manifest.data.token"], obj["spec"]


def test_an_object_that_does_not_create_the_secret_never_holds_its_value(install, workload):
    """The copy split in two: one Object creates the remote Secret empty; a second one, allowed to
    observe and update but not to create, and composed with the provider's finalizer already on it,
    patches the data in. The provider writes an Object back whole only to add that finalizer
    (``objFinalizer.AddFinalizer``, provider-kubernetes v1.2.1 ``object.go:814-826``, called after
    Observe: crossplane-runtime ``reconciler.go:1272``) or around a create (``:1287-1297``), so
    neither Object ever holds the value, in spec or status; a rotation still arrives."""
    value = "hf_" + secrets.token_hex(16)
    _token(install, value)
    install.apply(_copy_object(f"{COPY}-shell", f"{COPY}-split", reference=False))
    install.wait("the empty Secret on the workload cluster",
                 lambda: bool(install.kubectl("-n", TEAM, "get", "secret", f"{COPY}-split", "-o", "name",
                                              kubeconfig=workload.kubeconfig, check=False).strip()) or "not yet")
    data = _copy_object(f"{COPY}-data", f"{COPY}-split", policies=["Observe", "Update"])
    data["metadata"]["finalizers"] = [OBJECT_FINALIZER]
    install.apply(data)
    for current in (value, "hf_" + secrets.token_hex(16)):
        _token(install, current)
        install.wait("the value on the workload cluster",
                     lambda v=current: _remote_value(install, workload, f"{COPY}-split") == v
                     or f"{_remote_value(install, workload, f'{COPY}-split')!r}")
        for name in (f"{COPY}-shell", f"{COPY}-data"):
            obj = _object(install, name)
            assert _paths_with(obj, (current, _b64(current))) == [], (name, obj["spec"], obj.get("status"))


def _uid(install, workload, name: str) -> str | None:
    out = install.kubectl("-n", TEAM, "get", "secret", name, "-o", "json", kubeconfig=workload.kubeconfig,
                          check=False)
    return json.loads(out)["metadata"]["uid"] if out.strip() else None


def test_a_cache_token_moves_from_one_object_to_two_without_a_gap(install, workload):
    """A ModelCache an earlier release composed: one Object created and filled its token Secret,
    and holds the token in its spec. The upgrade as compose-model-cache makes it
    (``modelcache/compose.py``): the shell and data Objects beside it, the old Object made
    observe-only (``secretcopy.release``), then deleted. The remote Secret the hydration Job's
    pods read is never deleted (same uid, same value), and afterwards no Object holds the token,
    in spec or status, before or after a rotation."""
    from modelplane import secretcopy
    from modelplane.modelcache import hydrate
    from modelplane.naming import dns_label
    value = "hf_" + secrets.token_hex(16)
    _token(install, value)
    c = hydrate.token_copy("qwen3", TEAM, PROVIDER_CONFIG, PROVIDER_CONFIG, COPY, "token")
    remote = c.remote["metadata"]["name"]
    old_name = dns_label("modelcache", "qwen3", PROVIDER_CONFIG, "token")
    old = secretcopy.release(old_name, c)            # the earlier form: default policies, the reference on it
    del old["spec"]["managementPolicies"]
    old["spec"]["references"] = secretcopy.references(c)
    install.apply(old)
    install.wait("the token on the workload cluster", lambda: _remote_value(install, workload, remote) == value
                 or f"{_remote_value(install, workload, remote)!r}")
    uid = _uid(install, workload, remote)
    needles = (value, _b64(value))
    assert _paths_with(_object(install, old_name).get("spec"), needles) == [".forProvider.manifest.data.token"]

    for obj in (*secretcopy.objects(c), secretcopy.release(old_name, c)):
        install.apply(obj)
    assert _object(install, old_name)["spec"]["managementPolicies"] == ["Observe"]
    install.kubectl("-n", TEAM, "delete", "object.kubernetes.m.crossplane.io", old_name, "--timeout=180s")
    assert (_uid(install, workload, remote), _remote_value(install, workload, remote)) == (uid, value)

    rotated = "hf_" + secrets.token_hex(16)
    _token(install, rotated)
    install.wait("the rotated token on the workload cluster",
                 lambda: _remote_value(install, workload, remote) == rotated
                 or f"{_remote_value(install, workload, remote)!r}")
    assert _uid(install, workload, remote) == uid
    for name in (c.shell, c.data):
        obj = _object(install, name)
        assert _paths_with(obj, (*needles, rotated, _b64(rotated))) == [], (name, obj["spec"], obj.get("status"))


def _set_runtime_config(install, name: str) -> None:
    install.kubectl("patch", f"providers.pkg.crossplane.io/{KUBERNETES}", "--type=merge",
                    "-p", json.dumps({"spec": {"runtimeConfigRef": {"name": name}}}))


def _runs_with(install, flag: str, present: bool):
    runner = install.runtime().get(KUBERNETES) or {}
    try:
        argv = _cmdline(runner["pid"])
    except (KeyError, OSError):
        return f"no process yet: {runner}"
    return ((flag in argv) == present) or f"argv {argv}"


def test_without_sanitize_secrets_the_status_would_carry_it(install, workload):
    """The same Object under the runtime config a dependency gets by default (``default``: no
    flags): the provider restarts, and the rotated value reaches the workload cluster and shows in
    the Object's status. Then back to the shipped config, which hides it again."""
    _set_runtime_config(install, "default")
    try:
        install.wait("provider-kubernetes restarted without --sanitize-secrets",
                     lambda: _runs_with(install, "--sanitize-secrets", False))
        rotated = "hf_" + secrets.token_hex(16)
        _token(install, rotated)
        install.wait("the rotated Secret on the workload cluster",
                     lambda: _remote_value(install, workload) == rotated or f"{_remote_value(install, workload)!r}")
        leaked = install.wait("the value in the Object's status",
                              lambda: _status_data(_object(install)).get("token") == _b64(rotated)
                              or f"status data {_status_data(_object(install))}")
        assert leaked
    finally:
        _set_runtime_config(install, KUBERNETES.removeprefix("crossplane-contrib-"))
    install.wait("provider-kubernetes restarted with --sanitize-secrets",
                 lambda: _runs_with(install, "--sanitize-secrets", True))
    install.wait("the Object's status sanitized again",
                 lambda: _b64(rotated) not in json.dumps(_object(install)) or "still there")
