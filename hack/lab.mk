# The local lab (modelplane lab): workload clusters from the upstream programs of `make tools`.
# Include from the Makefile: `-include hack/lab.mk`.
LAB_STATE ?= $(HOME)/.local/state/modelplane/lab
LAB_DIR   ?= examples/fleet

lab-up: $(STAMP) ## Start a local lab shaped like LAB_DIR's InferenceClusters (default examples/fleet)
	$(BIN)/modelplane lab up $(LAB_DIR) --state $(LAB_STATE)

lab-status: $(STAMP) ## Every lab process: pid, alive, port, memory
	$(BIN)/modelplane lab status --state $(LAB_STATE)

lab-down: $(STAMP) ## Stop every process the lab started
	$(BIN)/modelplane lab down --state $(LAB_STATE)

lab-test: $(STAMP) ## Lab tests with real API servers, scheduler, kwok and LWS (needs make tools-judges tools-lab)
	MODELPLANE_REQUIRE_TOOLS=1 $(PYTEST) -m lab tests/lab

.PHONY: lab-up lab-status lab-down lab-test

lab-bench: $(STAMP) ## Lab start-up time and memory for 1, 3 and all example clusters (needs make tools)
	$(BIN)/python -m tests.lab.bench

.PHONY: lab-bench
