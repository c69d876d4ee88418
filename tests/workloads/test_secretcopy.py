"""modelplane.secretcopy: the two Objects of one copy, and the release of an old single Object."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane import secretcopy as SC
from modelplane.platform.ordering import provider_config_usages


def _copy(secret_type: str = "Opaque", field_path: str = "data", to: str = "data") -> SC.SecretCopy:
    return SC.SecretCopy(shell="copy", data="copy-data",
                         remote=SC.remote_secret("copy", "ml-team", secret_type, {"b": "2", "a": "1"}),
                         source="hf-token", namespace="ml-team", provider_config="prod-a",
                         labels={"a": "1"}, field_path=field_path, to_field_path=to)


@dataclass
class Case:
    name: str
    secret_type: str
    want_shell_data: dict | None


@pytest.mark.parametrize("case", [
    Case("an Opaque shell holds no keys", "Opaque", None),
    Case("a pull secret's shell holds '{}' so it parses", "kubernetes.io/dockerconfigjson",
         {".dockerconfigjson": "e30="}),
    Case("a TLS shell holds the two keys, empty", "kubernetes.io/tls", {"tls.crt": "", "tls.key": ""}),
], ids=lambda c: c.name)
def test_the_shell_creates_only_what_the_type_requires(case):
    shell, data = SC.objects(_copy(case.secret_type))
    assert shell["spec"]["forProvider"]["manifest"].get("data") == case.want_shell_data
    assert "data" not in data["spec"]["forProvider"]["manifest"]
    assert shell["spec"]["forProvider"]["manifest"]["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_only_the_data_object_reads_the_source_and_it_may_neither_create_nor_delete():
    shell, data = SC.objects(_copy(field_path="data[hf-token]", to="data.token"))
    assert "references" not in shell["spec"]
    assert shell["spec"]["managementPolicies"] == ["Observe", "Create", "Delete"]
    assert data["spec"]["managementPolicies"] == ["Observe", "Update"]
    assert data["metadata"]["finalizers"] == [SC.OBJECT_FINALIZER]
    assert data["spec"]["watch"] is True
    assert data["spec"]["references"] == [{
        "patchesFrom": {"apiVersion": "v1", "kind": "Secret", "name": "hf-token", "namespace": "ml-team",
                        "fieldPath": "data[hf-token]"},
        "toFieldPath": "data.token"}]
    # Only the shell deletes on the cluster, so only it holds the cluster's provider config.
    assert [u["spec"]["by"]["resourceRef"]["name"] for u in
            provider_config_usages({"shell": shell, "data": data}).values()] == ["copy"]


def test_a_released_object_observes_only_so_deleting_it_leaves_the_secret():
    released = SC.release("old-token", _copy())
    assert released["metadata"]["name"] == "old-token"
    assert released["spec"]["managementPolicies"] == ["Observe"]
    assert "references" not in released["spec"]
    assert SC.is_released(released)
    assert not SC.is_released(SC.objects(_copy())[0])
    assert not SC.is_released({"spec": {}})   # no policies: the default, '*', deletes
    assert provider_config_usages({"old": released}) == {}
