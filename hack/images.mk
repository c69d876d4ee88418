# Function runtime images and Crossplane packages, built without Docker (docs/platform/images.md).
# Include from the Makefile: `-include hack/images.mk`. Needs root (mmdebstrap, chroot, podman):
# hack/images/packages.sh installs Debian's mmdebstrap, podman and runc when missing.
# The version is pyproject.toml's project.version, for the images and every package.

XPKG_REGISTRY ?= xpkg.crossplane.io/modelplane

images: $(STAMP) ## One OCI runtime image per function from Debian packages + uv.lock (no Docker), cached in ~/.cache/modelplane/images
	@bash hack/images/packages.sh
	$(BIN)/python hack/images/build.py $(if $(FRESH),--fresh)

xpkg: images ## The eight Function packages with their runtime images embedded and the Configuration, into _output/ (needs make tools)
	$(BIN)/python hack/images/xpkg.py _output

xpkg-push: xpkg ## Push _output's packages to $(XPKG_REGISTRY) (a release: needs the registry's credentials)
	$(BIN)/python hack/images/xpkg.py --push $(XPKG_REGISTRY) _output

images-test: xpkg ## Image suite: reproducible rebuild, Dockerfile parity, xpkg inspected, crossplane render through the images (needs make tools)
	MODELPLANE_REQUIRE_TOOLS=1 $(PYTEST) -p no:randomly -m images tests/images

# The Crossplane e2e (hack/e2e-crossplane.mk) with each FunctionRevision run from its package image
# (make xpkg, pushed to the local registry, started by podman) instead of a `modelplane serve` process.
e2e-crossplane-images: xpkg e2e-registry ## make e2e-crossplane with the functions run from their package images (podman), as a cluster would (tests marked long left out)
	MODELPLANE_E2E_FUNCTIONS=image MODELPLANE_REQUIRE_TOOLS=1 $(PYTEST) -p no:randomly -m "e2e_crossplane and not long" tests/e2e

# The longer variant: .ci/run's optional step, run when time allows after every default suite.
e2e-crossplane-images-long: xpkg e2e-registry ## The tests of e2e-crossplane-images marked long (same-second deployments raced on real Crossplane)
	MODELPLANE_E2E_FUNCTIONS=image MODELPLANE_REQUIRE_TOOLS=1 $(PYTEST) -p no:randomly -m "e2e_crossplane and long" tests/e2e

.PHONY: images xpkg xpkg-push images-test e2e-crossplane-images e2e-crossplane-images-long
