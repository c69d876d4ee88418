"""Upgrading Modelplane over InferenceClasses stored before GKE pools followed Google's DRA
guide, judged by a real kube-apiserver (its own etcd and server, so the session's is untouched).

Before, ``provisioning.gke.accelerator.gpuDriverVersion`` defaulted to LATEST and had no rule;
now it defaults to INSTALLATION_DISABLED and a rule refuses anything else. A class stored
before keeps LATEST (the API server wrote the default at creation), and CRD validation
ratcheting lets it be updated as long as that field is left alone, so a GitOps re-apply of
an old class (which keeps LATEST), or a label on it, is not refused; a new class with LATEST, or an edit that sets
another value than INSTALLATION_DISABLED, is. (compose-inference-cluster keeps the pools such
a class built as they run: tests/functions/test_inference_cluster_gke_dra.py.)"""
from __future__ import annotations

import copy
import shutil
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from modelplane import paths
from modelplane.kube import ApiError, control_plane
from modelplane.lab.install import install_crds
from modelplane.validate import to_crd

from tests.upstream.need import tool

pytestmark = pytest.mark.slow  # starts etcd and a kube-apiserver

XRD = paths.APIS / "inferenceclasses" / "definition.yaml"
CRD_NAME = "inferenceclasses.modelplane.ai"


def _crd(old: bool) -> dict:
    crd = to_crd(yaml.safe_load(XRD.read_text(encoding="utf-8")))
    if old:  # as released before: default LATEST, no rule
        for version in crd["spec"]["versions"]:
            gke = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["provisioning"][
                "properties"]["gke"]["properties"]
            gke["accelerator"].pop("x-kubernetes-validations")
            gke["accelerator"]["properties"]["gpuDriverVersion"]["default"] = "LATEST"
    return crd


def _klass(name: str, **accelerator) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": name},
            "spec": {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com"}],
                     "provisioning": {"gke": {"machineType": "g2-standard-8",
                                              "accelerator": {"type": "nvidia-l4", "count": 1, **accelerator}}}}}


def _accelerator(obj: dict) -> dict:
    return obj["spec"]["provisioning"]["gke"]["accelerator"]


@pytest.fixture(scope="module")
def client():
    tool("etcd", "kube-apiserver")
    root = Path(tempfile.mkdtemp(prefix="modelplane-gke-dra-"))
    with control_plane(root, name="gke-dra") as api:
        c = api.client()
        install_crds(c, [_crd(old=True)])
        yield c
    shutil.rmtree(root, ignore_errors=True)


def _upgrade(client) -> None:
    """Replace the CRD with today's and wait until the server admits by it."""
    current = client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}")
    new = _crd(old=False)
    new["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    client.replace(new)
    deadline = time.monotonic() + 60
    while True:  # the new schema is served once a dry-run of a LATEST class is refused
        try:
            client.create(_klass("probe", gpuDriverVersion="LATEST"), dry_run=True)
        except ApiError as err:
            assert err.code == 422, err
            return
        assert time.monotonic() < deadline, "the upgraded CRD was not served within 60 s"
        time.sleep(0.2)


def test_class_stored_before_keeps_latest_and_stays_editable_after_the_upgrade(client):
    client.apply(_klass("old-default"))  # gpuDriverVersion omitted: the old default is written
    client.create(_klass("old-explicit", gpuDriverVersion="LATEST"))
    assert _accelerator(client.get(_klass("old-default")))["gpuDriverVersion"] == "LATEST"

    _upgrade(client)

    stored = client.get(_klass("old-default"))
    assert _accelerator(stored)["gpuDriverVersion"] == "LATEST"  # never rewritten by the new default
    # Ratcheting: an update that leaves the field alone is admitted (a label, the disk size).
    edited = copy.deepcopy(stored)
    edited["metadata"]["labels"] = {"team": "platform"}
    edited["spec"]["provisioning"]["gke"]["diskSizeGb"] = 300
    client.replace(edited)
    # A re-apply of the old manifests as written (server-side apply, as GitOps does) is
    # admitted and keeps the stored value, the field omitted (a default is no applier's) or not.
    client.apply(_klass("old-default"))
    client.apply(_klass("old-explicit", gpuDriverVersion="LATEST"))
    assert _accelerator(client.get(_klass("old-default")))["gpuDriverVersion"] == "LATEST"

    # Another GKE-installed mode on an old class, and a new class with LATEST, are refused.
    changed = client.get(_klass("old-explicit"))
    _accelerator(changed)["gpuDriverVersion"] = "DEFAULT"
    with pytest.raises(ApiError) as refused:
        client.replace(changed)
    assert refused.value.code == 422 and "must be INSTALLATION_DISABLED" in str(refused.value)
    with pytest.raises(ApiError) as refused:
        client.create(_klass("new-latest", gpuDriverVersion="LATEST"))
    assert refused.value.code == 422

    # A new class gets the guide's value by default.
    made = client.create(_klass("new-default"))
    assert _accelerator(made)["gpuDriverVersion"] == "INSTALLATION_DISABLED"
