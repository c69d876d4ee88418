# Modelplane developer commands. Every target bootstraps .venv by itself.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PYTEST  := $(BIN)/python -m pytest

.DEFAULT_GOAL := help

# Upstream programs (make tools) and the suites that use them (make e2e).
-include hack/tools.mk
-include hack/e2e.mk

help: ## Show the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP) ## Create .venv with the project and its dev tools

demo: $(STAMP) ## Simulate the example fleet (no cluster, no network)
	@$(BIN)/modelplane demo examples/fleet

test: $(STAMP) ## Run the test suite (quick reliability included)
	$(PYTEST) -n 2 -m "not slow" tests

bench: $(STAMP) ## Benchmarks: scheduler and RunFunction at 10/100/1000 clusters
	$(BIN)/python -m tests.bench

soak: $(STAMP) ## Long fuzz and load runs
	MODELPLANE_SOAK=1 $(PYTEST) -m slow tests/reliability

schemas: $(STAMP) ## Regenerate schemas/ from the XRDs in apis/
	$(BIN)/python -m modelplane.schemagen

crds: $(STAMP) ## Fetch the pinned upstream CRDs into schemas/upstream (Go + network; ONLY=name ...)
	$(BIN)/python hack/crds.py $(if $(ONLY),--only $(ONLY))

validate: $(STAMP) ## Validate every example manifest offline
	$(BIN)/modelplane validate examples

lint: $(STAMP) ## Ruff
	$(BIN)/ruff check lib functions tests

clean: ## Remove .venv and caches
	rm -rf $(VENV) .pytest_cache build *.egg-info

.PHONY: help venv demo test bench soak schemas crds validate lint clean
