# Pinned upstream programs (hack/tools/**/go.mod), built by hack/tools.sh into
# $(MODELPLANE_TOOLS_DIR) (default ~/.cache/modelplane/tools), listed in its tools.json.
# Include from the Makefile: `include hack/tools.mk`.

tools: ## Build pinned upstream programs (crossplane, etcd, kube-*, kubectl, kwok, lws, crossplane core, providers, traefik) into ~/.cache/modelplane/tools
	@bash hack/tools.sh

tools-%: ## Build one pinned program, e.g. make tools-kube-apiserver
	@bash hack/tools.sh $*

.PHONY: tools
