# Every target does exactly what its name says. `make help` lists them.
GO      ?= go
BIN     ?= bin
PKGS    := ./...

# This machine has no registry and runs inside a container: testcontainers must
# not start its reaper (the image cannot be pulled; suites clean up themselves)
# and must dial the engine on loopback. Both are harmless elsewhere.
export TESTCONTAINERS_RYUK_DISABLED ?= true
export TESTCONTAINERS_HOST_OVERRIDE ?= 127.0.0.1
# The PostgreSQL image the suites run; set to postgres:15 where a registry answers.
export CRASHGAME_POSTGRES_IMAGE ?= crashgame-postgres:15

.PHONY: deps help generate check-generate build run test toolchain fairness-script unit quick integration vet hygiene lint fuzz bench bench-backoffice cost load images cluster cluster-roll cluster-down clean rules helm

# The Debian packages `make test` needs beyond Go and a Docker engine, and
# .ci/run installs (it calls this target): PostgreSQL 15 and HAProxy (the
# suites' images are built from them), Chromium (the table's browser test),
# Python 3 (the fairness script). As root, or with SUDO=sudo.
DEPS    := postgresql-15 haproxy chromium python3

deps: ## install make test's Debian 12 packages beyond Go and Docker (apt-get; SUDO=sudo)
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(DEPS) >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(DEPS) >/dev/null; }

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

generate: ## regenerate gen/ from the documents in api/
	$(GO) generate ./api/...
	gofmt -l gen/ | (! grep .) || (echo "generated code is not gofmt-clean" && exit 1)

check-generate: ## fail when gen/ differs from what api/ generates (restores gen/ afterwards)
	@tmp=$$(mktemp -d) && cp -R gen "$$tmp/gen" && \
	$(MAKE) --no-print-directory generate >/dev/null && \
	if ! diff -r "$$tmp/gen" gen >"$$tmp/diff"; then \
		cat "$$tmp/diff"; rm -rf gen && cp -R "$$tmp/gen" gen; rm -rf "$$tmp"; \
		echo "check-generate: gen/ does not match api/ (never edit gen/ by hand; run make generate and commit)"; exit 1; \
	fi; rm -rf "$$tmp"; echo "check-generate: gen/ matches api/"

build: ## build the static binaries into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./cmd/...

# make run: builds bin/crashgame, then runs `crashgame dev` as itself (exec),
# so that Ctrl-C reaches it and make reports its own exit status (0 on a
# clean stop). PORT is the game's port, the lobby and wallet are on PORT+1
# and /metrics on PORT+2; LOBBY_PORT, METRICS_PORT and DATA set one each.
# Another PORT also keeps its databases apart (data/PORT/): two `make run
# PORT=...` run side by side.
PORT         ?= 8080
LOBBY_PORT   ?=
METRICS_PORT ?=
DATA         ?=
RUN_FLAGS    := --port $(PORT) \
	$(if $(LOBBY_PORT),--wallet-listen 127.0.0.1:$(LOBBY_PORT)) \
	$(if $(METRICS_PORT),--metrics-listen 127.0.0.1:$(METRICS_PORT)) \
	$(if $(DATA),--data $(DATA))

run: ## the whole thing on this machine (PORT=8080; LOBBY_PORT, METRICS_PORT, DATA)
	$(GO) build -o $(BIN)/crashgame ./cmd/crashgame
	exec $(BIN)/crashgame dev $(RUN_FLAGS)

vet: ## go vet
	$(GO) vet $(PKGS)

# golangci-lint runs at this version through go run, outside the module's
# go.mod; its cache is in the user's cache directory, so a second run reads
# only what changed.
GOLANGCI_LINT ?= github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

# make hygiene (.ci/hygiene, which .ci/run also calls first): on what git
# tracks, no file over 1 MB and no ELF executable, each named; and no line of
# make help over 100 characters.
hygiene: ## no tracked file over 1 MB or ELF; make help lines within 100 characters
	.ci/hygiene

# make lint: go vet (gen/ included), gofmt (files of every build tag), and
# golangci-lint with .golangci.yml: govet, staticcheck, errcheck, gosec,
# revive (names), ineffassign, unused.
lint: hygiene vet ## make hygiene, go vet, gofmt and golangci-lint with .golangci.yml
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) run $(GOLANGCI_LINT) run ./...

# make images: PostgreSQL, NATS, crashgame, operator-sim and the TLS front,
# built locally (no registry).
images: ## build the container images the suites need, locally (no registry)
	integration/images.sh

# make cluster: deploy/compose.yaml (PostgreSQL, NATS, 3 replicas, HAProxy,
# operator-sim); prints the lobby URL (CRASHGAME_PORT=8080
# CRASHGAME_LOBBY_PORT=8081). Checks the host's packages first
# (deploy/cluster.sh check).
cluster: ## the game as a cluster in Docker (deploy/compose.yaml); prints the lobby URL
	deploy/cluster.sh check
	$(MAKE) --no-print-directory images
	deploy/cluster.sh up

cluster-roll: ## restart the cluster's replicas one at a time, each back in rotation first
	deploy/cluster.sh roll

cluster-down: ## stop and remove the cluster of make cluster, with its data
	deploy/cluster.sh down

# The -short unit tests mostly wait on real time (rounds of a second or two),
# not on the CPU: make quick runs -parallel 8 of a package's parallel tests at
# once instead of one a core, and -p 4 packages at once. make unit keeps Go's
# defaults: its PostgreSQL cases start a container per package, and the
# engine's lease tests miss their timings with four packages at once on 2
# cores (seen in CI).
QUICK_PARALLEL ?= 8
QUICK_PACKAGES ?= 4

unit: ## unit tests with the race detector (fuzz seed corpora included)
	$(GO) test -race -count=1 -timeout 6m $(PKGS)

# make quick: -short skips the PostgreSQL cases and the long restart cases;
# make unit runs them.
quick: ## the loop of minutes: unit tests with -race, -short, no container
	$(GO) test -race -short -count=1 -timeout 6m -parallel $(QUICK_PARALLEL) -p $(QUICK_PACKAGES) $(PKGS)

# make integration: integration/suite runs its scenarios in three lanes side
# by side (-parallel 16).
integration: images ## the testcontainers suites (-tags integration)
	$(GO) test -race -count=1 -timeout 25m -parallel 16 -tags integration ./integration/...

# make toolchain: docs/integrators.md followed literally, for ogen and for
# oapi-codegen, in new modules outside the repo: libopenapi-validator
# validates the documents; the guide's commands and code build; crashgame
# wallet-check passes both example wallets and fails the oapi-codegen one
# without its request validator; both generators' clients of game.v1 and
# table.v1 survive an unknown code, an unknown field, a 429 and an HTML 503.
# integration/toolchain is its own module; it needs the Go module proxy;
# nothing generated is kept.
toolchain: ## docs/integrators.md followed with ogen and oapi-codegen (Go module proxy)
	cd integration/toolchain && $(GO) run . -api ../../api

# make helm: the chart (deploy/helm/crashgame) rendered with helm's engine for
# each value set of integration/helm/values, every manifest decoded strictly
# into its Kubernetes API type, and checked against the game (routes, ports,
# grace, selectors). integration/helm is its own module; no cluster needed.
helm: ## the Helm chart rendered and checked against the game (no cluster needed)
	cd integration/helm && $(GO) test -count=1 . && $(GO) run .

# make fairness-script: docs/examples/fairness/verify_chains.py (Python,
# standard library) against its self-test: honest chains verify, every
# tampering fails.
fairness-script: ## the third party's verifier of the public chains against its self-test
	python3 docs/examples/fairness/test_verify_chains.py

# make test: lint, the second toolchain, the Helm chart, the fairness script,
# unit tests with -race, the integration suites (one of which runs the
# fairness script against the real game).
test: lint toolchain helm images fairness-script unit integration ## the tests' one command: lint, toolchain, helm, fairness-script, unit, integration

fuzz: ## run each fuzz target for a while (FUZZTIME=30s)
	@for p in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for f in $$(grep -h '^func Fuzz' $$p/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-30s} $$p || exit 1; \
		done; done

bench: ## benchmarks, in benchstat format (BENCHTIME=1s COUNT=6)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $${BENCHTIME:-1s} -count $${COUNT:-6} $(PKGS) | tee bench.txt

# make bench-backoffice fills the table first: a few minutes.
bench-backoffice: ## the back office's page of 1,000 of 10 million movements, PostgreSQL
	CRASHGAME_BENCH_10M=1 $(GO) test -run '^$$' -bench BenchmarkOperatorMovementsPage10M -benchtime 200x ./internal/store

# make cost's test binary, callgrind out files and run logs (callgrind_annotate
# reads the out files: where the instructions go).
COST_DIR := callgrind

# make cost: TestCost of internal/engine under callgrind, runs of 400 and
# 4,000 bets none cashed out, and of 4,000 all cashed out (COST_BETS=4000
# REPEAT=1; REPEAT=3 measures 3 times and gives the spread); out files in
# callgrind/.
cost: ## instructions per bet and per cashout under valgrind's callgrind
	@mkdir -p $(COST_DIR)
	$(GO) test -c -o $(COST_DIR)/engine.test ./internal/engine
	$(GO) run ./cmd/loadgen cost --binary $(COST_DIR)/engine.test --out $(COST_DIR) --bets $${COST_BETS:-4000} --cashouts $${COST_BETS:-4000} --repeat $${REPEAT:-1}

# make load: the game alone on CPU 0 and the floor of a bet measured after it
# (NOPIN=1 for neither). PLAYERS=10000 ROUNDS=3 BETS=1, DATABASE=postgres://...
# for PostgreSQL, PROFILE=dir for the game's heap connected, its CPU profile
# while playing and a runtime trace of the first flight.
load: ## the load tool against the whole thing on loopback (PLAYERS, ROUNDS, BETS)
	$(GO) run ./cmd/loadgen --self --players $${PLAYERS:-10000} --rounds $${ROUNDS:-3} --bets $${BETS:-1} $${DATABASE:+--database "$$DATABASE"} $${PROFILE:+--profile "$$PROFILE"} $(if $(NOPIN),,--pin --floor) --out load-result.json --chart load-result.png

clean: ## remove build output
	rm -rf $(BIN) $(COST_DIR) bench.txt load-result.json load-result.png

rules: ## which contract rules (docs/contract/rules.md) a test names, and which none does
	@ids=$$(grep -oE '^\| [A-Z]+-[0-9]+ ' docs/contract/rules.md | tr -d '| '); total=0; covered=0; missing=""; \
	for id in $$ids; do total=$$((total+1)); \
		if grep -rqw --include='*_test.go' -- "$$id" .; then covered=$$((covered+1)); else missing="$$missing $$id"; fi; \
	done; echo "rules named by a test: $$covered of $$total"; [ -z "$$missing" ] || echo "not named by any test:$$missing"
