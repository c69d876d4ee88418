"""What the install suite runs (tests/install/conftest.py), shared with tests/ci's check that
.ci/run builds it: every program the session starts."""
from __future__ import annotations

TOOLS = ("crossplane", "crossplane-core", "provider-kubernetes", "provider-helm", "etcd", "kube-apiserver",
         "kube-controller-manager", "kubectl")
