# Pinned upstream programs (hack/tools/**/go.mod), built by hack/tools.sh into
# $(MODELPLANE_TOOLS_DIR) (default ~/.cache/modelplane/tools), listed in its tools.json.
# Include from the Makefile: `include hack/tools.mk`.

tools: ## Build pinned upstream programs (crossplane, etcd, kube-*, kubectl, kwok, lws, crossplane core, providers, traefik) into ~/.cache/modelplane/tools
	@bash hack/tools.sh

# The groups .ci/run builds one at a time, each just before the first suite that needs it.
tools-judges: ## Build the programs every Go suite needs: crossplane CLI, etcd, kube-apiserver, kubectl
	@bash hack/tools.sh judges

tools-lab: ## Build the lab's programs: kube-scheduler, kube-controller-manager, kwok, lws, traefik
	@bash hack/tools.sh lab

tools-control-plane: ## Build Crossplane core and the providers (make e2e-crossplane)
	@bash hack/tools.sh control-plane

tools-%: ## Build one pinned program, e.g. make tools-kube-apiserver
	@bash hack/tools.sh $*

.PHONY: tools tools-judges tools-lab tools-control-plane
