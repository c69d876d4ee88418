# Suites that judge Modelplane with real upstream programs (make tools): the crossplane CLI's
# render and beta validate, etcd + kube-apiserver on loopback. Include from the Makefile:
# `-include hack/e2e.mk`. MODELPLANE_REQUIRE_TOOLS=1 turns "not built" skips into failures.

e2e: $(STAMP) ## Upstream judges: render parity with crossplane render, beta validate and kube-apiserver admission (needs make tools-judges)
	MODELPLANE_REQUIRE_TOOLS=1 $(PYTEST) tests/render tests/upstream

.PHONY: e2e
