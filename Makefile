# vmcp: make build | test | lint | bench | fuzz | demo
GO ?= go
BIN := bin

.PHONY: build test lint bench fuzz demo clean

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The end-to-end tests run real MCP servers and the MCP Inspector client
# from the npm registry, pinned in package.json and package-lock.json.
# (The inspector's own lockfile breaks `npm ci`, so this is `npm install`.)
node_modules/.package-lock.json: package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

test: node_modules/.package-lock.json
	$(GO) vet ./...
	$(GO) test -race -timeout 20m ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants to reformat:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# 60 seconds of coverage-guided fuzzing of parse+check+plan.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzCompile -fuzztime 60s ./compiler

demo: build node_modules/.package-lock.json
	./examples/demo/run.sh

clean:
	rm -rf $(BIN)
