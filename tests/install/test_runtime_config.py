"""Which runtime config the lab's package runtime gives a provider, and the flags it starts it with
(``modelplane.e2e.runtime_config``): the rules Crossplane's Deployment runtime follows."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplane.e2e import runtime_config as rc

SOURCE = "127.0.0.1:5000/xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1"


def _provider(ref: str | None = None) -> dict:
    return {"spec": {"package": "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1",
                     **({"runtimeConfigRef": {"name": ref}} if ref else {})}}


def _image_config(prefix: str, config: str | None) -> dict:
    spec: dict = {"matchImages": [{"type": "Prefix", "prefix": prefix}]}
    if config:
        spec["runtime"] = {"configRef": {"name": config}}
    return {"spec": spec}


@dataclass
class Case:
    name: str
    want: str
    provider: dict | None = None
    image_configs: list[dict] = field(default_factory=list)


CASES = [
    Case("no Provider read: the CRD's default", "default"),
    Case("the Provider's runtimeConfigRef", "provider-kubernetes", _provider("provider-kubernetes")),
    Case("an ImageConfig's runtime config wins over the Provider's", "from-image",
         _provider("provider-kubernetes"), [_image_config("127.0.0.1:5000/xpkg.crossplane.io/", "from-image")]),
    Case("the longest matching prefix wins", "longest", None,
         [_image_config("127.0.0.1:5000/", "short"),
          _image_config("127.0.0.1:5000/xpkg.crossplane.io/crossplane-contrib/", "longest")]),
    Case("an ImageConfig without a runtime (a rewrite) is not a runtime config", "provider-kubernetes",
         _provider("provider-kubernetes"), [_image_config("127.0.0.1:5000/", None)]),
    Case("an ImageConfig that does not match the resolved source is ignored", "default", _provider(),
         [_image_config("xpkg.crossplane.io/crossplane-contrib/", "unrewritten")]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_config_name(case):
    assert rc.config_name(case.provider, case.image_configs, SOURCE) == case.want


def test_container_args_are_the_package_runtime_containers():
    config = {"spec": {"deploymentTemplate": {"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "args": ["--nope"]},
        {"name": "package-runtime", "args": ["--sanitize-secrets", "--poll=1m"]}]}}}}}}
    assert rc.container_args(config) == ["--sanitize-secrets", "--poll=1m"]
    assert rc.container_args(None) == []
    assert rc.container_args({"spec": {"serviceAccountTemplate": {}}}) == []


def test_the_configs_flags_replace_the_labs_and_none_is_given_twice():
    lab = ["--poll=10s", "--enable-watches", "--debug"]
    got = rc.merge_args(lab, ["--sanitize-secrets", "--enable-watches", "--poll=1m"])
    assert got == ["--debug", "--sanitize-secrets", "--enable-watches", "--poll=1m"]
    assert rc.merge_args(lab, []) == lab
    assert rc.merge_args(["--debug"], ["--no-debug"]) == ["--no-debug"]
