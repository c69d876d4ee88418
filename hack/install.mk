# A platform engineer's install (docs/platform/install.md), run against real Crossplane.
# Include from the Makefile: `-include hack/install.mk`. Needs `make tools`, root and podman (the
# functions run from the packages `make xpkg` built) and the local registry (make e2e-registry).

push: ## Push _output's packages (make xpkg) to REGISTRY=<registry/path>, as they are (credentials: ~/.docker/config.json)
	@[ -n "$(REGISTRY)" ] || { echo "push: set REGISTRY to your registry and path, e.g. make push REGISTRY=registry.example.com/platform"; exit 2; }
	$(BIN)/python hack/images/xpkg.py --push $(REGISTRY) _output

install-test: xpkg e2e-registry ## The install page's commands against real Crossplane and a local registry: push, runtime configs, Configuration; a Secret copy whose Object status carries no data
	MODELPLANE_REQUIRE_TOOLS=1 $(PYTEST) -p no:randomly -m install tests/install

.PHONY: push install-test
