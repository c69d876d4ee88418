"""The control plane's pure parts: package plan, runtime status edits, certificates, charts, gateways.

No process, no network: these run in `make test`. The end-to-end suite with
real Crossplane is tests/e2e/test_crossplane.py (`make e2e-crossplane`).
"""
from __future__ import annotations

import datetime
import gzip
import io
import tarfile

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID
from modelplane import paths
from modelplane.e2e import charts, package_runtime, packages, parity
from modelplane.kube import pki
from modelplane.platform import stack


def _crossplane_yaml() -> dict:
    return yaml.safe_load((paths.ROOT / "crossplane.yaml").read_text())


def test_every_dependency_has_a_lab_route():
    """A new dependsOn entry needs a build, a stand-in or a function folder, or the Configuration never resolves."""
    for dep in packages.dependencies(_crossplane_yaml()):
        path, name = dep["package"], dep["package"].rsplit("/", 1)[1]
        if dep["kind"] == "Function":
            assert (paths.FUNCTIONS / name / "package" / "crossplane.yaml").is_file(), path
        else:
            assert path in packages.BUILT_PROVIDERS or packages.is_standin(path), path


def test_standin_crds_follow_upjet_layout_and_each_crd_belongs_to_one_package():
    deps = [d["package"] for d in packages.dependencies(_crossplane_yaml())]
    crds = packages.standin_crds(deps)
    seen: dict[str, str] = {}
    for path, files in crds.items():
        for rel in files:
            assert (paths.crds_dir() / rel).is_file(), rel
            assert rel not in seen, f"{rel} in {seen.get(rel)} and {path}"
            seen[rel] = path
    eks = crds["xpkg.upbound.io/upbound/provider-aws-eks"]
    assert "provider-upjet-aws/eks.aws.m.upbound.io_clusters.yaml" in eks
    assert all(f.startswith(("provider-upjet-aws/eks.", "provider-upjet-aws/aws.m.")) for f in eks)


def test_standin_provider_configs_go_to_the_family_package_when_there_is_one(tmp_path):
    for cloud, files in (("gcp", ("container.gcp.m.upbound.io_clusters.yaml", "gcp.m.upbound.io_providerconfigs.yaml")),):
        folder = tmp_path / f"provider-upjet-{cloud}"
        folder.mkdir()
        for f in files:
            (folder / f).write_text("{}")
    without = packages.standin_crds(["xpkg.upbound.io/upbound/provider-gcp-container"], tmp_path)
    assert without["xpkg.upbound.io/upbound/provider-gcp-container"] == [
        "provider-upjet-gcp/container.gcp.m.upbound.io_clusters.yaml", "provider-upjet-gcp/gcp.m.upbound.io_providerconfigs.yaml"]
    with_family = packages.standin_crds(["xpkg.upbound.io/upbound/provider-gcp-container",
                                         "xpkg.upbound.io/upbound/provider-family-gcp"], tmp_path)
    assert with_family["xpkg.upbound.io/upbound/provider-family-gcp"] == [
        "provider-upjet-gcp/gcp.m.upbound.io_providerconfigs.yaml"]
    assert with_family["xpkg.upbound.io/upbound/provider-gcp-container"] == [
        "provider-upjet-gcp/container.gcp.m.upbound.io_clusters.yaml"]


def test_floor_reads_the_minimum_and_names_the_field_otherwise():
    assert packages.floor(">=v3.0.0", "x") == "v3.0.0"
    with pytest.raises(ValueError, match=r"crossplane.yaml dependsOn p: version '\^1.0'"):
        packages.floor("^1.0", "crossplane.yaml dependsOn p")


def test_stage_configuration_holds_only_the_package(tmp_path):
    root = packages.stage_configuration(tmp_path / "cfg")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.yaml"))
    assert files[0] == "apis/inferenceclasses/composition.yaml"
    assert "crossplane.yaml" in files
    assert all(f == "crossplane.yaml" or f.startswith("apis/") for f in files)


def test_standin_package_says_what_it_is(tmp_path):
    crds = packages.standin_crds(["xpkg.upbound.io/upbound/provider-aws-iam"])
    root = packages.stage_standin("xpkg.upbound.io/upbound/provider-aws-iam",
                                  crds["xpkg.upbound.io/upbound/provider-aws-iam"], tmp_path / "iam")
    meta = yaml.safe_load((root / "crossplane.yaml").read_text())
    assert meta["kind"] == "Provider" and meta["metadata"]["name"] == "provider-aws-iam"
    assert meta["metadata"]["annotations"][packages.STANDIN_ANNOTATION] == "true"
    assert sorted(p.name for p in root.glob("*.yaml")) == [
        "aws.m.upbound.io_clusterproviderconfigs.yaml", "aws.m.upbound.io_providerconfigs.yaml", "crossplane.yaml",
        "iam.aws.m.upbound.io_rolepolicyattachments.yaml", "iam.aws.m.upbound.io_roles.yaml"]


def test_image_configs_rewrite_both_registries_below_the_local_one():
    cfgs = packages.image_configs("127.0.0.1:5000")
    assert [(c["spec"]["matchImages"][0]["prefix"], c["spec"]["rewriteImage"]["prefix"]) for c in cfgs] == [
        ("xpkg.crossplane.io/", "127.0.0.1:5000/xpkg.crossplane.io/"),
        ("xpkg.upbound.io/", "127.0.0.1:5000/xpkg.upbound.io/"),
    ]
    assert len({c["metadata"]["name"] for c in cfgs}) == 2


@pytest.mark.parametrize(("source", "path"), [
    ("xpkg.crossplane.io/modelplane/compose-model-deployment:v0.1.0", "xpkg.crossplane.io/modelplane/compose-model-deployment"),
    ("127.0.0.1:5000/a/b:v1@sha256:abc", "127.0.0.1:5000/a/b"),
    ("127.0.0.1:5000/a/b", "127.0.0.1:5000/a/b"),
])
def test_package_path_drops_tag_and_digest(source, path):
    assert package_runtime.package_path({"spec": {"image": source}}) == path


def test_with_condition_replaces_by_type_and_keeps_an_unchanged_one():
    old = {"type": "RuntimeHealthy", "status": "True", "reason": "R", "message": "m", "lastTransitionTime": "then"}
    other = {"type": "Healthy", "status": "True"}
    same = package_runtime.with_condition([old, other], {**old, "lastTransitionTime": "now"})
    assert same == [old, other]  # no change: no write, transition time kept
    changed = package_runtime.with_condition([old, other], {**old, "status": "False", "lastTransitionTime": "now"})
    assert changed[0]["status"] == "False" and changed[1] == other
    assert package_runtime.with_condition([other], old) == [other, old]


def test_issued_certificate_is_signed_by_the_ca_and_names_loopback():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # Crossplane's CA is RSA (PKCS#1)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "crossplane-root-ca")])
    now = datetime.datetime.now(datetime.UTC)
    ca = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
          .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(key, hashes.SHA256()))
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    data = pki.CA.from_pem(ca_pem, key_pem).loopback_tls("modelplane-compose-model-deployment")
    leaf = x509.load_pem_x509_certificate(data["tls.crt"])
    key.public_key().verify(leaf.signature, leaf.tbs_certificate_bytes, padding.PKCS1v15(), leaf.signature_hash_algorithm)
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert data["ca.crt"] == ca_pem
    assert isinstance(leaf.public_key(), ec.EllipticCurvePublicKey)


def test_stand_in_charts_use_provider_helms_cache_names_and_are_deterministic(tmp_path):
    written = charts.seed(cache=tmp_path)
    names = sorted(p.name for p in written)
    for comp in stack.COMPONENTS:
        for ch in comp.charts:
            assert f"{ch.name}-{comp.version}.tgz" in names
    first = {p.name: p.read_bytes() for p in written}
    assert {p.name: p.read_bytes() for p in charts.seed(cache=tmp_path)} == first
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(first["lws-0.10.0.tgz"]))) as tar:
        meta = yaml.safe_load(tar.extractfile("lws/Chart.yaml").read())
        assert sorted(tar.getnames()) == ["lws/Chart.yaml", "lws/templates/stand-in.yaml"]
    assert (meta["apiVersion"], meta["name"], meta["version"]) == ("v2", "lws", "0.10.0")
    assert meta["annotations"][charts.ANNOTATION] == "true"


# provider-kubernetes v1.2.1 --debug lines (console encoder), as its log shows them.
_GC = ('2026-11-23T16:06:48.887Z\tDEBUG\tprovider-kubernetes\tRunning garbage collection for resource informers\t'
       '{"controller": "managed/object.kubernetes.m.crossplane.io", "count": 0}')
_OTHER_GC = _GC.replace("managed/object.kubernetes.m.", "managed/object.kubernetes.")   # the cluster-scoped Object
_FAILED = ('2026-11-23T16:06:48.900Z\tERROR\tunable to setup reconciler\t'
           '{"gvk": "kubernetes.m.crossplane.io/v1alpha1, Kind=Object", "error": "no matches for kind"}')


def test_provider_kubernetes_counts_as_set_up_only_once_its_namespaced_object_controller_is():
    assert package_runtime.controllers_started("") == "not yet"
    assert package_runtime.controllers_started(_OTHER_GC) == "not yet"
    assert package_runtime.controllers_started(f"x\n{_GC}\n") == "yes"
    assert package_runtime.controllers_started(_FAILED) == "failed"
    assert package_runtime.controllers_started(f"{_FAILED}\n{_OTHER_GC}") == "failed"


def test_a_provider_waits_until_discovery_serves_its_crds():
    crd = {"spec": {"group": "kubernetes.m.crossplane.io", "names": {"plural": "objects"},
                    "versions": [{"name": "v1alpha1", "served": True}, {"name": "v0", "served": False}]},
           "status": {"conditions": [{"type": "Established", "status": "True"}]}}
    listed = {"kubernetes.m.crossplane.io/v1alpha1": {"resources": [{"name": "objects"}, {"name": "objects/status"}]}}
    assert package_runtime.served_in_discovery(crd, listed)
    assert not package_runtime.served_in_discovery(crd, {"kubernetes.m.crossplane.io/v1alpha1": {"resources": []}})
    assert not package_runtime.served_in_discovery(crd, {})
    unestablished = {**crd, "status": {"conditions": [{"type": "Established", "status": "False"}]}}
    assert not package_runtime.served_in_discovery(unestablished, listed)


# --- parity: simulate --lab's record as comparable rows ---------------------------------------------


def _owned(kind: str, name: str, namespace: str, owner_kind: str, owner: str) -> dict:
    meta = {"name": name, "ownerReferences": [{"kind": "Other", "name": "x"},
                                              {"kind": owner_kind, "name": owner, "controller": True}]}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": kind, "metadata": meta}


def test_composed_resources_are_grouped_under_the_xr_that_controls_them():
    md = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment", "metadata": {"name": "a", "namespace": "t"}}
    other_md = {**md, "metadata": {"name": "a", "namespace": "u"}}
    cluster = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": "c"}}
    replica = {**_owned("ModelReplica", "a-0-c", "t", "ModelDeployment", "a"), "apiVersion": "modelplane.ai/v1alpha1"}
    # A ModelEndpoint shares its replica's name: the owner's kind tells them apart.
    obj = _owned("Object", "a-0-c-deployment", "t", "ModelReplica", "a-0-c")
    release = _owned("Release", "c-lws", "modelplane-system", "InferenceCluster", "c")
    pcs = [{**_owned("ClusterProviderConfig", "c", "", "InferenceCluster", "c"), "apiVersion": f"{g}/v1alpha1"}
           for g in ("kubernetes.m.crossplane.io", "helm.m.crossplane.io")]
    docs = [md, other_md, cluster, replica, obj, release, *pcs, {"kind": "Free", "metadata": {"name": "f"}}]
    assert sorted(parity.xrs(docs)) == [("InferenceCluster", "", "c"), ("ModelDeployment", "t", "a"),
                                        ("ModelDeployment", "u", "a"), ("ModelReplica", "t", "a-0-c")]
    assert {k: sorted(v) for k, v in parity.composed(docs).items()} == {
        ("ModelDeployment", "t", "a"): [("modelplane.ai", "ModelReplica", "a-0-c")],
        ("ModelReplica", "t", "a-0-c"): [("", "Object", "a-0-c-deployment")],
        # A cluster-scoped owner, namespaced resources; one name in two API groups.
        ("InferenceCluster", "", "c"): [("", "Release", "c-lws"),
                                        ("helm.m.crossplane.io", "ClusterProviderConfig", "c"),
                                        ("kubernetes.m.crossplane.io", "ClusterProviderConfig", "c")],
    }


def test_pod_rows_keep_what_runs_where_and_drop_generated_names():
    model = {"namespace": "t", "name": "a-7d9f-xk2p", "node": "n1", "pool": "h100", "phase": "Running",
             "labels": {"modelplane.ai/deployment": "a", "modelplane.ai/replica": "0", "modelplane.ai/engine": "e",
                        "modelplane.ai/role": "standalone"}, "devices": [{"device": "gpu-0"}, {"device": "gpu-1"}]}
    picker = {"namespace": "t", "name": "a-epp-5c-abcde", "node": "n2", "pool": "h100", "phase": "Running",
              "labels": {"app.kubernetes.io/instance": "a-epp"}, "devices": []}
    elsewhere = {**picker, "namespace": "envoy-gateway-system"}
    rows = parity.pod_rows({"c": [picker, model, elsewhere]}, {"t"})
    assert rows == [("c", "t", "a-epp", "", "Running", 0), ("c", "t", "a/0/e/standalone", "h100", "Running", 2)]
    renamed = {**model, "name": "a-other-suffix", "node": "n9"}
    assert parity.pod_rows({"c": [renamed, picker]}, {"t"}) == rows
    assert parity.pod_rows({"c": [{**model, "phase": "Pending"}, picker]}, {"t"}) != rows


def test_stage_holds_the_fleet_and_each_team_folder_prefixed(tmp_path):
    fleet, team = tmp_path / "fleet", tmp_path / "ml-team"
    fleet.mkdir(), team.mkdir()
    (fleet / "a.yaml").write_text("kind: A\n")
    (team / "a.yaml").write_text("kind: B\n")
    (team / "notes.txt").write_text("not a manifest\n")
    out = parity.stage(fleet, [team], tmp_path / "out")
    assert sorted(p.name for p in out.iterdir()) == ["a.yaml", "ml-team-a.yaml"]
    assert (out / "ml-team-a.yaml").read_text() == "kind: B\n"


def test_a_missing_simulate_lab_record_names_the_command_that_makes_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="--simulate-lab examples/ml-team"):
        parity.load(tmp_path / parity.RECORD)


def test_only_the_documented_differences_are_set_aside():
    replica = {"order": "2026-11-23T16:27:34Z/ml-team/qwen/00001", "cluster": {"name": "c"}}
    simulated = {"order": "2026-01-01T00:00:19Z/ml-team/qwen/00001", "cluster": {"name": "c"}}
    assert (parity.without_known_differences("ModelReplica", replica)
            == parity.without_known_differences("ModelReplica", simulated))
    other_deployment = {**simulated, "order": "2026-01-01T00:00:19Z/ml-team/other/00001"}
    assert (parity.without_known_differences("ModelReplica", replica)
            != parity.without_known_differences("ModelReplica", other_deployment))
    stamped = {"forProvider": {"chart": {"name": "lws", "pullSecretRef": {"name": ""}}}}
    assert parity.without_known_differences("Release", stamped) == {"forProvider": {"chart": {"name": "lws"}}}
    assert stamped["forProvider"]["chart"]["pullSecretRef"] == {"name": ""}   # the input is left alone
    real = {"forProvider": {"chart": {"name": "lws", "pullSecretRef": {"name": "creds"}}}}
    assert parity.without_known_differences("Release", real) == real
    assert parity.without_known_differences("Object", {"order": replica["order"]}) == {"order": replica["order"]}


# --- the data plane: which gateway class, which services the lab can answer ---------------------


def test_with_a_data_plane_every_gateway_naming_none_names_the_lab_class(tmp_path):
    from modelplane.e2e import fleet
    src = tmp_path / "src"
    src.mkdir()
    docs = [{"kind": "InferenceCluster", "metadata": {"name": "a"}, "spec": {"cluster": {"source": "GKE"}}},
            {"kind": "InferenceCluster", "metadata": {"name": "b"},
             "spec": {"cluster": {"source": "Existing"}, "gateway": {"className": "istio"}}},
            {"kind": "InferenceGateway", "metadata": {"name": "default"}, "spec": {"loadBalancer": "Cloud"}},
            {"kind": "InferenceClass", "metadata": {"name": "c"}, "spec": {}}]
    (src / "f.yaml").write_text(yaml.safe_dump_all(docs))
    fleet.rewrite([src], tmp_path / "lab", gateway_class=fleet.LAB_GATEWAY_CLASS)
    out = {d["metadata"]["name"]: d for d in yaml.safe_load_all((tmp_path / "lab" / "f.yaml").read_text())}
    assert out["a"]["spec"]["gateway"] == {"className": "modelplane-lab"}
    assert out["b"]["spec"]["gateway"] == {"className": "istio"}           # a class of its own stays
    assert out["default"]["spec"] == {"loadBalancer": "Cloud", "gatewayClassName": "modelplane-lab"}
    assert out["c"] == docs[3]
    fleet.rewrite([src], tmp_path / "plain")                                # no data plane: as written
    plain = {d["metadata"]["name"]: d for d in yaml.safe_load_all((tmp_path / "plain" / "f.yaml").read_text())}
    assert "gateway" not in plain["a"]["spec"] and "gatewayClassName" not in plain["default"]["spec"]


def _endpoint(name: str, **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": "ml-team", "labels": labels}}


def _route(*refs: dict) -> dict:
    return {"spec": {"rules": [{"backendRefs": list(refs)}]}}


def test_the_lab_answers_a_service_only_when_every_endpoint_is_in_fleet_behind_services():
    from modelplane.e2e import traffic
    svc = {"metadata": {"namespace": "ml-team", "name": "qwen"}}
    rep = _endpoint("qwen-0", **{"modelplane.ai/deployment": "qwen", "modelplane.ai/replica": "0",
                                 "modelplane.ai/cluster": "west"})
    assert traffic.replica_of(rep) == ("qwen", "0", "west")
    service_route = _route({"name": "qwen-0-west-qwen", "port": 8000})       # kind omitted: Service
    assert traffic.unanswerable(svc, [rep], {"west": service_route}) == ""
    pool = _route({"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "pd"})
    assert "inference.networking.k8s.io/InferencePool" in traffic.unanswerable(svc, [rep], {"west": pool})
    assert "no HTTPRoute on cluster west" in traffic.unanswerable(svc, [rep], {"west": None})
    external = _endpoint("together", provider="together")
    assert traffic.replica_of(external) is None
    assert "external provider endpoint(s) together" in traffic.unanswerable(svc, [rep, external],
                                                                            {"west": service_route})
    both = traffic.unanswerable(svc, [rep, external], {"west": pool})         # every reason, not the first
    assert "together" in both and "InferencePool" in both
    assert "routes to no endpoint" in traffic.unanswerable(svc, [], {})


def test_requests_go_only_to_the_labs_own_addresses():
    from modelplane.e2e import traffic
    with pytest.raises(ValueError, match="outside the lab's network"):
        traffic.request("http://203.0.113.10/ml-team/qwen/v1/models")


def test_the_control_plane_traefik_mirrors_the_labs_own():
    """``e2e.gateway`` restates what the lab keeps private; these are the lab's very facts."""
    from pathlib import Path

    from modelplane.e2e import fleet, gateway
    from modelplane.lab import GATEWAY_CLASS, dataplane, netns
    assert gateway.traefik(Path("/t"), "198.18.3.9") == dataplane.traefik(Path("/t"), "198.18.3.9")
    ours, labs = gateway.gateway_class(), dataplane.gateway_class("x")
    assert (ours["metadata"]["name"], ours["spec"]["controllerName"]) == (labs["metadata"]["name"],
                                                                          labs["spec"]["controllerName"])
    assert fleet.LAB_GATEWAY_CLASS == GATEWAY_CLASS
    assert gateway.INSIDE == netns.INSIDE
    assert (gateway.HTTP_PORT, gateway.PING_PORT) == (dataplane.HTTP_PORT, dataplane.PING_PORT)
    net = gateway.Network(namespace="mplab-x", slot=3, host="198.18.3.1")
    plan = netns.Plan(3)
    assert net.gateway == plan.crossplane_gateway
    taken = {plan.host, plan.inside, plan.control_plane_gateway, *(plan.gateway(i) for i in range(netns.MAX_CLUSTERS))}
    assert net.gateway not in taken
    assert gateway.accepted({"metadata": {"generation": 2}, "status": {"conditions": [
        {"type": "Accepted", "status": "True", "observedGeneration": 2}]}})
    assert not gateway.accepted({"metadata": {"generation": 2}, "status": {"conditions": [
        {"type": "Accepted", "status": "True", "observedGeneration": 1}]}})


def test_the_data_plane_is_wanted_unless_opted_out_or_not_root(monkeypatch):
    import os

    from modelplane.e2e import controlplane
    monkeypatch.setenv("MODELPLANE_LAB_DATA_PLANE", "0")
    assert controlplane.data_plane_opted_out() and not controlplane.wants_data_plane()
    monkeypatch.setenv("MODELPLANE_LAB_DATA_PLANE", "1")
    assert not controlplane.data_plane_opted_out()
    assert controlplane.wants_data_plane() == (os.geteuid() == 0)
