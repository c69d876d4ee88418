"""XRDs, Compositions and package metadata are well-formed Crossplane objects
and agree with each other (kinds, names, function references)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from modelplane import paths

from tests.apis import files

CRD_OF = {
    ("apiextensions.crossplane.io/v2", "CompositeResourceDefinition"):
        ("apiextensions.crossplane.io_compositeresourcedefinitions.yaml", "v2"),
    ("apiextensions.crossplane.io/v1", "Composition"): ("apiextensions.crossplane.io_compositions.yaml", "v1"),
    ("meta.pkg.crossplane.io/v1", "Configuration"): ("meta.pkg.crossplane.io_configurations.yaml", "v1"),
    ("meta.pkg.crossplane.io/v1", "Function"): ("meta.pkg.crossplane.io_functions.yaml", "v1"),
    ("pkg.crossplane.io/v1", "Function"): ("pkg.crossplane.io_functions.yaml", "v1"),
}

SCOPES = {
    "inferenceclasses": ("InferenceClass", "icl", "Cluster"),
    "inferenceclusters": ("InferenceCluster", "ic", "Cluster"),
    "inferencegateways": ("InferenceGateway", "ig", "Cluster"),
    "modeldeployments": ("ModelDeployment", "md", "Namespaced"),
    "modelservices": ("ModelService", "ms", "Namespaced"),
    "modelcaches": ("ModelCache", "mc", "Namespaced"),
    "modelendpoints": ("ModelEndpoint", "me", "Namespaced"),
    "modelreplicas": ("ModelReplica", "mr", "Namespaced"),
}


def crossplane_files() -> list[Path]:
    return (
        sorted(paths.APIS.glob("*/*.yaml"))
        + sorted(paths.FUNCTIONS.glob("*/package/crossplane.yaml"))
        + [paths.ROOT / "crossplane.yaml", paths.EXAMPLES / "functions.yaml"]
    )


@pytest.mark.parametrize("path", crossplane_files(), ids=lambda p: str(p.relative_to(paths.ROOT)))
def test_validates_against_crossplane_crds(path):
    for doc in files.docs(path):
        key = (doc["apiVersion"], doc["kind"])
        assert key in CRD_OF, f"{path}: unexpected {key}"
        schema = files.crossplane_schema(*CRD_OF[key])
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]
        assert errors == [], f"{path}: {errors}"


def test_eight_xrds_with_scope_names_and_categories():
    xrds = files.xrds()
    assert sorted(xrds) == sorted(SCOPES)
    for plural, xrd in xrds.items():
        kind, short, scope = SCOPES[plural]
        spec = xrd["spec"]
        assert xrd["metadata"]["name"] == f"{plural}.modelplane.ai"
        assert (spec["group"], spec["scope"]) == ("modelplane.ai", scope), plural
        assert spec["names"]["kind"] == kind and spec["names"]["plural"] == plural
        assert spec["names"]["shortNames"] == [short]
        assert spec["names"]["categories"] == ["crossplane", "modelplane"]
        [version] = spec["versions"]
        assert (version["name"], version["served"], version["referenceable"]) == ("v1alpha1", True, True)
        assert version["additionalPrinterColumns"], f"{plural}: add printer columns"
        status = files.openapi(xrd)["properties"]["status"]
        assert "conditions" not in status.get("properties", {}), f"{plural}: Crossplane injects conditions"


def test_model_deployment_serves_scale():
    version = files.xrds()["modeldeployments"]["spec"]["versions"][0]
    assert version["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas.scheduled",
        "labelSelectorPath": ".status.selector",
    }
    status = files.openapi(files.xrds()["modeldeployments"])["properties"]["status"]["properties"]
    assert status["selector"]["type"] == "string" and status["replicas"]["properties"]["scheduled"]["type"] == "integer"


@dataclass(frozen=True)
class ListMap:
    name: str
    plural: str
    path: tuple[str, ...]


LIST_MAPS = [
    ListMap("class devices", "inferenceclasses", ("spec", "devices")),
    ListMap("cluster node pools", "inferenceclusters", ("spec", "nodePools")),
    ListMap("deployment engines", "modeldeployments", ("spec", "engines")),
]


@pytest.mark.parametrize("case", LIST_MAPS, ids=lambda c: c.name)
def test_list_maps_keyed_on_name(case):
    node = files.openapi(files.xrds()[case.plural])
    for key in case.path:
        node = node["properties"][key]
    assert node["x-kubernetes-list-type"] == "map"
    assert node["x-kubernetes-list-map-keys"] == ["name"]
    assert "name" in node["items"]["required"]


def test_compositions_reference_installed_function_names():
    compositions = files.compositions()
    installed = {d["metadata"]["name"]: d["spec"]["package"] for d in files.docs(paths.EXAMPLES / "functions.yaml")}
    config = files.docs(paths.ROOT / "crossplane.yaml")[0]
    depends = {d["package"] for d in config["spec"]["dependsOn"] if d["kind"] == "Function"}
    assert sorted(compositions) == sorted(files.xrds())
    for plural, comp in compositions.items():
        xrd = files.xrds()[plural]
        assert comp["metadata"]["name"] == f"{plural}.modelplane.ai"
        assert comp["spec"]["compositeTypeRef"] == {"apiVersion": "modelplane.ai/v1alpha1",
                                                    "kind": xrd["spec"]["names"]["kind"]}
        assert comp["spec"]["mode"] == "Pipeline"
        [step] = comp["spec"]["pipeline"]
        name = step["functionRef"]["name"]
        assert step["step"] == "compose"
        # Crossplane names a dependency-installed function after its package path.
        package = installed[name].split(":")[0]
        assert name == package.split("/", 1)[1].replace("/", "-"), name
        assert package in depends, f"crossplane.yaml does not depend on {package}"
        assert (paths.FUNCTIONS / package.rsplit("/", 1)[1] / "package" / "crossplane.yaml").is_file()


def test_configuration_dependencies():
    config = files.docs(paths.ROOT / "crossplane.yaml")[0]
    assert config["metadata"]["name"] == "modelplane"
    assert config["spec"]["crossplane"]["version"] == ">=v2.3.0"
    deps = config["spec"]["dependsOn"]
    for dep in deps:
        assert set(dep) == {"apiVersion", "kind", "package", "version"}, dep
        assert dep["apiVersion"] == "pkg.crossplane.io/v1"
    packages = {d["package"].rsplit("/", 1)[1] for d in deps}
    want = {"provider-kubernetes", "provider-helm", "provider-gcp-container", "provider-gcp-cloudplatform",
            "provider-gcp-filestore", "provider-aws-eks", "provider-aws-iam", "provider-aws-ec2", *files.FUNCTIONS}
    assert want <= packages, sorted(want - packages)


@pytest.mark.parametrize("fn", files.FUNCTIONS)
def test_function_package_metadata(fn):
    meta = files.docs(paths.FUNCTIONS / fn / "package" / "crossplane.yaml")[0]
    assert (meta["apiVersion"], meta["kind"], meta["spec"]) == ("meta.pkg.crossplane.io/v1", "Function", {})
    annotations = meta["metadata"]["annotations"]
    for key in ("meta.crossplane.io/maintainer", "meta.crossplane.io/source", "meta.crossplane.io/description"):
        assert annotations.get(key), f"{fn}: set {key}"


def test_functions_yaml_lists_every_function_once():
    names = [d["metadata"]["name"] for d in files.docs(paths.EXAMPLES / "functions.yaml")]
    assert names == [f"modelplane-{fn}" for fn in files.FUNCTIONS]
