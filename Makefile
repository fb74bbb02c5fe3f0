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

.PHONY: deps help generate check-generate build run test toolchain fairness-script unit quick integration vet lint fuzz bench bench-backoffice cost load images cluster cluster-roll cluster-down clean rules helm

# The Debian packages `make test` needs beyond Go and a Docker engine, and
# .ci/run installs (it calls this target): PostgreSQL 15 and HAProxy (the
# suites' images are built from them), Chromium (the table's browser test),
# Python 3 (the fairness script). As root, or with SUDO=sudo.
DEPS    := postgresql-15 haproxy chromium python3

deps: ## install what make test needs on Debian 12 beyond Go and a Docker engine: postgresql-15 haproxy chromium python3 (apt-get; as root, or SUDO=sudo)
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

run: ## the newcomer's one command: the whole thing on this machine
	$(GO) run ./cmd/crashgame dev

vet: ## go vet
	$(GO) vet $(PKGS)

# golangci-lint runs at this version through go run, outside the module's
# go.mod; its cache is in the user's cache directory, so a second run reads
# only what changed.
GOLANGCI_LINT ?= github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

lint: vet ## go vet (gen/ included), gofmt (files of every build tag), and golangci-lint with .golangci.yml: govet, staticcheck, errcheck, gosec, revive (names), ineffassign, unused
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) run $(GOLANGCI_LINT) run ./...

images: ## build the container images the suites need, locally (no registry): PostgreSQL, NATS, crashgame, operator-sim, the TLS front
	integration/images.sh

cluster: ## the game as a cluster in Docker (deploy/compose.yaml: PostgreSQL, NATS, 3 replicas, HAProxy, operator-sim); prints the lobby URL (CRASHGAME_PORT=8080 CRASHGAME_LOBBY_PORT=8081). Checks the host's packages first (deploy/cluster.sh check)
	deploy/cluster.sh check
	$(MAKE) --no-print-directory images
	deploy/cluster.sh up

cluster-roll: ## rolling restart of the cluster's replicas, one at a time, each back in rotation before the next
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

quick: ## the loop of minutes: unit tests with the race detector and no container (-short: the PostgreSQL cases and the long restart cases are skipped; make unit runs them)
	$(GO) test -race -short -count=1 -timeout 6m -parallel $(QUICK_PARALLEL) -p $(QUICK_PACKAGES) $(PKGS)

integration: images ## the testcontainers suites (integration/suite runs its scenarios in three lanes side by side: -parallel 16)
	$(GO) test -race -count=1 -timeout 25m -parallel 16 -tags integration ./integration/...

toolchain: ## docs/integrators.md followed literally, for ogen and for oapi-codegen, in new modules outside the repo: libopenapi-validator validates the documents; the guide's commands and code build; crashgame wallet-check passes both example wallets and fails the oapi-codegen one without its request validator; both generators' clients of game.v1 and table.v1 survive an unknown code, an unknown field, a 429 and an HTML 503 (integration/toolchain, its own module; needs the Go module proxy; nothing generated is kept)
	cd integration/toolchain && $(GO) run . -api ../../api

helm: ## the Helm chart (deploy/helm/crashgame) rendered with helm's engine for each value set of integration/helm/values, every manifest decoded strictly into its Kubernetes API type, and checked against the game (routes, ports, grace, selectors); its own module, no cluster needed
	cd integration/helm && $(GO) test -count=1 . && $(GO) run .

fairness-script: ## the third party's verifier of the public chains (docs/examples/fairness/verify_chains.py, Python, standard library) against its self-test: honest chains verify, every tampering fails
	python3 docs/examples/fairness/test_verify_chains.py

test: lint toolchain helm images fairness-script unit integration ## the tests' one command: lint, the second toolchain, the Helm chart, the fairness script, unit tests with -race, integration suites (one of which runs the script against the real game)

fuzz: ## run each fuzz target for a while (FUZZTIME=30s)
	@for p in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for f in $$(grep -h '^func Fuzz' $$p/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-30s} $$p || exit 1; \
		done; done

bench: ## benchmarks, in benchstat format (BENCHTIME=1s COUNT=6)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $${BENCHTIME:-1s} -count $${COUNT:-6} $(PKGS) | tee bench.txt

bench-backoffice: ## the back office's page of 1,000 transactions from 10 million movements on PostgreSQL (fills the table first: a few minutes)
	CRASHGAME_BENCH_10M=1 $(GO) test -run '^$$' -bench BenchmarkOperatorMovementsPage10M -benchtime 200x ./internal/store

# make cost's test binary, callgrind out files and run logs (callgrind_annotate
# reads the out files: where the instructions go).
COST_DIR := callgrind

cost: ## instructions per bet and per cashout of the engine's fixed workload under valgrind's callgrind (TestCost of internal/engine: runs of 400 and 4,000 bets none cashed out, and of 4,000 all cashed out; COST_BETS=4000 REPEAT=1; REPEAT=3 measures 3 times and gives the spread); out files in callgrind/
	@mkdir -p $(COST_DIR)
	$(GO) test -c -o $(COST_DIR)/engine.test ./internal/engine
	$(GO) run ./cmd/loadgen cost --binary $(COST_DIR)/engine.test --out $(COST_DIR) --bets $${COST_BETS:-4000} --cashouts $${COST_BETS:-4000} --repeat $${REPEAT:-1}

load: ## the load tool against the whole thing on loopback, the game alone on CPU 0 and the floor of a bet measured after it (PLAYERS=10000 ROUNDS=3 BETS=1 DATABASE=postgres://... NOPIN=1 for neither; PROFILE=dir for the game's heap connected, its CPU profile while playing and a runtime trace of the first flight)
	$(GO) run ./cmd/loadgen --self --players $${PLAYERS:-10000} --rounds $${ROUNDS:-3} --bets $${BETS:-1} $${DATABASE:+--database "$$DATABASE"} $${PROFILE:+--profile "$$PROFILE"} $(if $(NOPIN),,--pin --floor) --out load-result.json --chart load-result.png

clean: ## remove build output
	rm -rf $(BIN) $(COST_DIR) bench.txt load-result.json load-result.png

rules: ## which contract rules (docs/contract/rules.md) a test names, and which none does
	@ids=$$(grep -oE '^\| [A-Z]+-[0-9]+ ' docs/contract/rules.md | tr -d '| '); total=0; covered=0; missing=""; \
	for id in $$ids; do total=$$((total+1)); \
		if grep -rqw --include='*_test.go' -- "$$id" .; then covered=$$((covered+1)); else missing="$$missing $$id"; fi; \
	done; echo "rules named by a test: $$covered of $$total"; [ -z "$$missing" ] || echo "not named by any test:$$missing"
