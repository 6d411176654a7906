# vmcp: make build | test | lint | bench | demo
GO ?= go
BIN := bin

.PHONY: build test lint bench demo fuzz npm clean

build:
	$(GO) build -o $(BIN)/ ./cmd/...

test:
	$(GO) vet ./...
	$(GO) test -race -timeout 20m ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants to reformat:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

demo: build
	./examples/demo/run.sh

clean:
	rm -rf $(BIN)
