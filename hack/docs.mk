# The documentation site (MkDocs + Material, the docs extra of uv.lock).
# Include from the Makefile: `-include hack/docs.mk`.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

docs-reference: $(STAMP)
	$(BIN)/python -m modelplane.dev.apidocs

docs: $(STAMP) docs-reference ## Build the documentation site strictly into site/ (regenerates the API reference)
	@hack/docs-packages.sh build
	$(MKDOCS) build --strict

docs-serve: $(STAMP) docs-reference ## Preview the documentation site on http://127.0.0.1:8000
	@hack/docs-packages.sh build
	$(MKDOCS) serve --strict -a 127.0.0.1:8000

docs-test: $(STAMP) ## Test the docs: manifests, fleets, commands, strict build, a real browser
	@hack/docs-packages.sh test
	$(PYTEST) -n 2 --dist loadgroup -m docs tests/docs

.PHONY: docs docs-serve docs-test docs-reference
