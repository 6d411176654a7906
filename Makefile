# vmcp: make build | test | lint | bench | fuzz | demo | peers | temporal-cli | hydra | exchangeop | jaeger | helm | image
GO ?= go
BIN := bin

.PHONY: build test lint bench bench-toolhive fuzz demo peers temporal-cli hydra exchangeop jaeger helm image system-packages clean

# The npm peers run on the Node.js that package.json pins (the npm
# registry's `node` package), not on the machine's: the MCP Inspector asks
# for Node >= 22.19, the conformance suite crashes on 20, and Debian ships
# 20. Every recipe runs with node_modules/.bin first on PATH.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
export NODE_VERSION_CHECK := const [major, minor] = process.versions.node.split(".").map(Number); if (major < 22 || (major === 22 && minor < 19)) { console.error(`node is $${process.version} at $${process.execPath}; the npm peers need Node >= 22.19 (package.json pins it: rm -rf node_modules and make peers)`); process.exit(1); }

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The end-to-end tests run real MCP servers, the MCP Inspector, the
# official TypeScript SDK client and the MCP conformance suite from the npm
# registry, pinned in package.json and package-lock.json, with Node itself.
# (The inspector's own lockfile breaks `npm ci`, so this is `npm install`.)
node_modules/.package-lock.json: package.json package-lock.json
	npm install --no-audit --no-fund
	@node -e "$$NODE_VERSION_CHECK"
	@touch $@

# Install the npm peers and say which Node runs them.
peers: node_modules/.package-lock.json
	@echo "node $$(node --version) at $$(command -v node)"

# The Temporal executor's tests start a Temporal dev server: the Temporal
# CLI, built from the Go module proxy once (about 2 minutes on 2 cores)
# into a cache outside the tree, where the tests look for it.
# (v1.9.1 cannot be go installed: its go.mod has a local replace.)
TEMPORAL_CLI_VERSION := v1.5.1
VMCP_BIN_CACHE ?= $(HOME)/.cache/vmcp/bin
TEMPORAL := $(VMCP_BIN_CACHE)/temporal-$(TEMPORAL_CLI_VERSION)

$(TEMPORAL):
	mkdir -p $(VMCP_BIN_CACHE)
	GOBIN=$(VMCP_BIN_CACHE) $(GO) install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_CLI_VERSION)
	ln -sf temporal $@

temporal-cli: $(TEMPORAL)
	@echo "temporal CLI at $(VMCP_BIN_CACHE)/temporal: $$($(VMCP_BIN_CACHE)/temporal --version)"

# The OAuth tests (auth/oidc's wiring, e2e) run a real authorization
# server: Ory Hydra, built from the Go module proxy once (about 10 minutes
# on 2 cores) by scripts/hydra.sh from the tools/hydra module into the same
# cache, where internal/testenv looks for it.
HYDRA_VERSION := v2.3.0
HYDRA := $(VMCP_BIN_CACHE)/hydra-$(HYDRA_VERSION)

$(HYDRA):
	VMCP_BIN_CACHE=$(VMCP_BIN_CACHE) GO=$(GO) ./scripts/hydra.sh

hydra: $(HYDRA)

# The token exchange tests (RFC 8693) run tools/exchangeop, a small OpenID
# Provider built on zitadel/oidc's op package (Hydra has no token
# exchange), built once into the same cache (scripts/exchangeop.sh; under a
# minute) and again when its source changes.
EXCHANGEOP_VERSION := v3.52.0
EXCHANGEOP := $(VMCP_BIN_CACHE)/exchangeop-$(EXCHANGEOP_VERSION)

$(EXCHANGEOP): tools/exchangeop/main.go tools/exchangeop/go.mod
	VMCP_BIN_CACHE=$(VMCP_BIN_CACHE) GO=$(GO) ./scripts/exchangeop.sh

exchangeop: $(EXCHANGEOP)

# The tracing tests export their spans to a real Jaeger (v2, all-in-one)
# and read them back through its query API: cmd/jaeger at the version
# tools/jaeger/go.mod pins, built once into the same cache (see
# scripts/jaeger.sh; about 15 minutes on 2 busy cores).
JAEGER_VERSION := v1.76.0
JAEGER := $(VMCP_BIN_CACHE)/jaeger-$(JAEGER_VERSION)

$(JAEGER): tools/jaeger/go.mod
	GO=$(GO) VMCP_BIN_CACHE=$(VMCP_BIN_CACHE) ./scripts/jaeger.sh

jaeger: $(JAEGER)

# The container image, built without a daemon (deploy/image, in the
# deploy module with the chart's test): build/vmcp-image.tar, for docker
# load, podman load or crane push.
image:
	mkdir -p build
	cd deploy && $(GO) run ./image -repo .. -o ../build/vmcp-image.tar -tag ghcr.io/vmcp-dev/vmcp:$$(git describe --tags --always 2>/dev/null || echo dev)

# The Helm chart's test (deploy/helm, in the deploy module) lints and renders
# deploy/helm/vmcp with a real helm: v4, built from the Go module proxy
# once (about 4 minutes on 2 cores) into the same cache.
HELM_VERSION := v4.3.2
HELM := $(VMCP_BIN_CACHE)/helm-$(HELM_VERSION)

$(HELM):
	mkdir -p $(VMCP_BIN_CACHE)/.helm-build
	GOBIN=$(VMCP_BIN_CACHE)/.helm-build $(GO) install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)
	mv $(VMCP_BIN_CACHE)/.helm-build/helm $@

helm: $(HELM)

# The Debian packages the tests run (chromium for the console's browser
# tests, jq for the agent session of docs/authoring.md), installed when missing.
system-packages:
	@./scripts/system-packages.sh

test: system-packages node_modules/.package-lock.json $(TEMPORAL) $(HYDRA) $(EXCHANGEOP) $(JAEGER) $(HELM)
	$(GO) vet ./...
	PATH="$(VMCP_BIN_CACHE):$$PATH" $(GO) test -race -timeout 20m ./...
	cd deploy && $(GO) vet ./... && VMCP_BIN_CACHE=$(VMCP_BIN_CACHE) $(GO) test -race ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants to reformat:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# vmcp's BenchmarkRun beside ToolHive's workflow engine on the same shapes
# (bench/toolhive, its own module: ./... never builds it).
bench-toolhive:
	./bench/toolhive/compare.sh

# Coverage-guided fuzzing: every fuzz target of the module for FUZZTIME
# each (8 targets: about 3 minutes at the default on 2 cores), the minimizing of each
# new input bounded by FUZZMINIMIZE (see scripts/fuzz.sh). FUZZFLAGS goes
# on to go test, e.g. FUZZFLAGS='-parallel 1'.
FUZZTIME ?= 20s
FUZZMINIMIZE ?= 500x
FUZZFLAGS ?=
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZE=$(FUZZMINIMIZE) FUZZFLAGS='$(FUZZFLAGS)' ./scripts/fuzz.sh

demo: build node_modules/.package-lock.json
	./examples/demo/run.sh

clean:
	rm -rf $(BIN)
