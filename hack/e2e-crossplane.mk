# Real Crossplane reconciles Modelplane on the lab (docs/e2e-crossplane.md).
# Include from the Makefile: `-include hack/e2e-crossplane.mk`.
# Needs `make tools` (Crossplane core and CLI, the providers, Kubernetes, kwok, lws) and an OCI
# registry: Debian's docker-registry, installed here when missing and apt-get is at hand.
# Run as root, the lab has its data plane (Traefik, mock engines) and the suite sends one request per
# ModelService through the InferenceGateway; MODELPLANE_LAB_DATA_PLANE=0 runs without (that test deselected).

e2e-registry: ## Install the local OCI registry the e2e control plane pushes packages to (Debian docker-registry)
	@command -v docker-registry >/dev/null 2>&1 || [ -n "$$DOCKER_REGISTRY_BIN" ] || { \
	  command -v apt-get >/dev/null 2>&1 || { echo "e2e-registry: install Debian's docker-registry (or set DOCKER_REGISTRY_BIN)"; exit 1; }; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq docker-registry >/dev/null || \
	  { $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq docker-registry >/dev/null; }; }

e2e-crossplane: $(STAMP) e2e-registry ## End to end with real Crossplane: lab clusters, Configuration installed, examples applied, scale, delete
	MODELPLANE_REQUIRE_TOOLS=1 $(PYTEST) -p no:randomly -m e2e_crossplane tests/e2e

.PHONY: e2e-registry e2e-crossplane
