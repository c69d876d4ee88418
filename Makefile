# Modelplane developer commands. Every target bootstraps .venv by itself, from
# uv.lock: the same versions on every machine, whenever it is installed.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PYTEST  := $(BIN)/python -m pytest
# uv installs the lock; it comes from PyPI into the venv itself (uv sync leaves it there).
UV_VERSION := 0.13.9
UV      := $(BIN)/uv
UVSTAMP := $(VENV)/.uv-$(UV_VERSION)
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_PYTHON_DOWNLOADS := never

.DEFAULT_GOAL := help

# Upstream programs (make tools) and the suites that use them (make e2e, lab-test, e2e-crossplane).
-include hack/tools.mk
-include hack/e2e.mk
-include hack/lab.mk
-include hack/e2e-crossplane.mk
-include hack/docs.mk
-include hack/images.mk
-include hack/install.mk

help: ## Show the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(UVSTAMP):
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	@touch $(UVSTAMP)

# --locked: fail, rather than drift, when pyproject.toml changed and uv.lock did not (run make lock).
$(STAMP): pyproject.toml uv.lock $(UVSTAMP)
	$(UV) sync -q --locked --extra dev --extra docs --python $(BIN)/python
	@touch $(STAMP)

venv: $(STAMP) ## Create .venv with the project and its dev tools, as uv.lock pins them

lock: $(UVSTAMP) ## Re-resolve uv.lock after a pyproject.toml change (UPGRADE=1: newest allowed versions)
	$(UV) lock $(if $(UPGRADE),--upgrade)
	$(UV) sync -q --locked --extra dev --extra docs --python $(BIN)/python
	@touch $(STAMP)

demo: $(STAMP) ## Simulate the example fleet (no cluster, no network)
	@$(BIN)/modelplane demo examples/fleet

test: $(STAMP) ## Run the test suite (quick reliability included)
	$(PYTEST) -n 2 --dist loadgroup -m "not slow and not docs" tests

bench: $(STAMP) ## Benchmarks: scheduler, RunFunction in-process and over gRPC (1,000 and 10,000 clusters: latency, breakdown, load, memory), simulate (25 to 5,000 clusters)
	$(BIN)/python -m tests.bench

# Both halves run even when the first fails; Hypothesis keeps its database outside the repository.
soak: $(STAMP) ## 10,000 hostile cases per function (a table), then slow load/CLI runs (<= 30 min, 2 cores)
	@status=0; export HYPOTHESIS_STORAGE_DIRECTORY=$${HOME}/.cache/modelplane/hypothesis; \
	$(BIN)/python -m tests.reliability.soak || status=1; \
	MODELPLANE_SOAK=1 $(PYTEST) -m slow tests/reliability || status=1; \
	exit $$status

schemas: $(STAMP) ## Regenerate schemas/ from the XRDs in apis/
	$(BIN)/python -m modelplane.dev.schemagen

crds: $(STAMP) ## Fetch the pinned upstream CRDs into schemas/upstream (Go + network; ONLY=name ...)
	$(BIN)/python hack/crds.py $(if $(ONLY),--only $(ONLY))

validate: $(STAMP) ## Validate every example manifest offline
	$(BIN)/modelplane validate examples

lint: $(STAMP) ## Ruff
	$(BIN)/ruff check lib functions tests

clean: ## Remove .venv and caches
	rm -rf $(VENV) .pytest_cache build dist lib/*.egg-info

.PHONY: help venv lock demo test bench soak schemas crds validate lint clean
