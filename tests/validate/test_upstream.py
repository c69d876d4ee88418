"""Composed resources against the upstream CRDs and the Kubernetes swagger."""
from __future__ import annotations

import pytest
from modelplane.validate.upstream import UpstreamSchemas, assert_valid

from .upstream_cases import BAD, CASES, BadCase, Case, deployment, set_at


@pytest.fixture(scope="module")
def schemas() -> UpstreamSchemas:
    return UpstreamSchemas.load()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_valid_object_passes(schemas: UpstreamSchemas, case: Case) -> None:
    assert schemas.validate(case.build()) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_misspelled_field_fails_with_path(schemas: UpstreamSchemas, case: Case) -> None:
    got = schemas.validate(set_at(case.build(), case.typo_at, "x"))
    field = case.typo_at[-1]
    assert got == [f'{case.want_path}: unknown field "{field}"']


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_invalid_objects(schemas: UpstreamSchemas, case: BadCase) -> None:
    got = schemas.validate(case.obj)
    assert len(got) == 1 and case.want in got[0], got


def test_builtin_kinds_resolve(schemas: UpstreamSchemas) -> None:
    for api_version, kind in [("v1", "Namespace"), ("v1", "Secret"), ("v1", "ConfigMap"), ("v1", "ServiceAccount"),
                              ("v1", "PersistentVolumeClaim"), ("batch/v1", "Job"),
                              ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
                              ("resource.k8s.io/v1", "ResourceClaimTemplate"), ("storage.k8s.io/v1", "StorageClass")]:
        found = schemas.lookup(api_version, kind)
        assert found is not None and found.origin == "builtin", (api_version, kind)


def test_assert_valid_lists_errors() -> None:
    assert_valid(deployment())
    with pytest.raises(AssertionError, match=r"Deployment/qwen is not valid:\n  spec.replicas"):
        assert_valid(set_at(deployment(), ["spec", "replicas"], "two"))
