#!/bin/bash
# Builds every container image the integration suites (integration/suite) run,
# locally, with no registry and no network:
#
#   $CRASHGAME_POSTGRES_IMAGE   (default crashgame-postgres:15)  integration/postgres-image/build.sh
#   $CRASHGAME_NATS_IMAGE       (default crashgame-nats:<version>, 2.15.2 today) NATS between the
#                               replicas (integration/nats-image/Dockerfile, FROM scratch)
#   crashgame:dev               the game server          (Dockerfile, CMD=crashgame)
#   operator-sim:dev            the reference operator   (Dockerfile, CMD=operator-sim)
#   crashgame-tlsfront:dev      the suites' HTTPS front of operator-sim (integration/suite/tlsfront)
#   $CRASHGAME_LB_IMAGE         (default crashgame-lb:dev) the cluster's load balancer, HAProxy
#                               from the host's Debian package: integration/lb-image/build.sh
#
# How: the three Go programs are compiled on the host (CGO_ENABLED=0, -trimpath:
# static and reproducible; the host's module and build caches make this take
# seconds), then each image is built from the repo's Dockerfile, target
# `prebuilt`, RUNTIME_IMAGE=scratch, from a small staged context holding the
# binary and the host's CA bundle. nats-server is compiled the same way from
# the module go.mod pins (tools.go keeps it there; the tag carries its
# version) and put alone in an image by integration/nats-image/Dockerfile.
# No base image is pulled.
#
# Idempotent and fast when current: each image carries a label with a hash of
# its inputs (binary, Dockerfile, rootfs files, CA bundle); when the tag exists
# with the same hash, its docker build is skipped ("up to date").
#
# Usage: integration/images.sh            FORCE=1 rebuilds every image
#   CRASHGAME_POSTGRES_IMAGE=postgres:15  (a registry image) skips the PostgreSQL build
#   CRASHGAME_NATS_IMAGE=nats:2.15.2      (a registry image) skips the NATS build
#   CRASHGAME_IMAGES_FROM_SOURCE=1        builds the two programs with the Dockerfile's
#       from-source target instead, offline, in crashgame-go:1.26 (integration/go-image)
#       with a file module proxy staged from the host's module cache (slow: about two
#       minutes of compiling per program on a cold container; for checking the Dockerfile)
#   CRASHGAME_LB_IMAGE=haproxy:2.6        (a registry image) skips the load balancer build
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export DOCKER_API_VERSION=${DOCKER_API_VERSION:-1.41}   # newer CLI vs Debian's dockerd 20.10
PG_IMAGE=${CRASHGAME_POSTGRES_IMAGE:-crashgame-postgres:15}
LB_IMAGE=${CRASHGAME_LB_IMAGE:-crashgame-lb:dev}
GAME_IMAGE=${CRASHGAME_IMAGE:-crashgame:dev}
SIM_IMAGE=${CRASHGAME_OPERATOR_SIM_IMAGE:-operator-sim:dev}
FRONT_IMAGE=${CRASHGAME_TLSFRONT_IMAGE:-crashgame-tlsfront:dev}
NATS_MODULE=github.com/nats-io/nats-server/v2
NATS_VERSION=$(go list -m -f '{{.Version}}' "$NATS_MODULE")   # v2.15.2
NATS_IMAGE=${CRASHGAME_NATS_IMAGE:-crashgame-nats:${NATS_VERSION#v}}
CERTS=/etc/ssl/certs/ca-certificates.crt
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

command -v docker >/dev/null || { echo >&2 "images.sh: no docker CLI on PATH"; exit 1; }
docker info >/dev/null 2>&1 || { echo >&2 "images.sh: no Docker engine answers (docker info failed)"; exit 1; }
[ -s "$CERTS" ] || { echo >&2 "images.sh: no CA bundle at $CERTS (apt-get install ca-certificates)"; exit 1; }

# One run at a time (make -j, two suites starting together).
exec 9>/tmp/crashgame-images.lock
flock 9

t_all=$(date +%s%N)

# 1. PostgreSQL: its own script, itself idempotent. A registry image is pulled by the suites.
case "$PG_IMAGE" in
crashgame-postgres:*) integration/postgres-image/build.sh "$PG_IMAGE" ;;
*) echo "images.sh: $PG_IMAGE comes from a registry; not building it" ;;
esac

# The load balancer of deploy/compose.yaml: its own script, itself idempotent.
case "$LB_IMAGE" in
crashgame-lb:*) integration/lb-image/build.sh "$LB_IMAGE" ;;
*) echo "images.sh: $LB_IMAGE comes from a registry; not building it" ;;
esac

WORK=$(mktemp -d /tmp/crashgame-images.XXXX)
trap 'rm -rf "$WORK"' EXIT

# label_of TAG: the inputs label of an existing image, or "".
label_of() { docker image inspect -f '{{index .Config.Labels "crashgame.inputs"}}' "$1" 2>/dev/null || true; }

# 2. The binaries, on the host.
t=$(date +%s%N)
mkdir -p "$WORK/bin"
CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags='-s -w' -o "$WORK/bin/" \
	./cmd/crashgame ./cmd/operator-sim ./integration/suite/tlsfront
echo "images.sh: go build (host, static) $(ms "$t") ms"

# prebuilt TAG CMD: the Dockerfile's prebuilt target around $WORK/bin/CMD.
prebuilt() {
	local tag=$1 cmd=$2 ctx="$WORK/ctx-$2" t inputs
	inputs=$(cat "$WORK/bin/$cmd" Dockerfile integration/go-image/rootfs/etc/* "$CERTS" | sha256sum | cut -c1-24)
	if [ -z "${FORCE:-}" ] && [ "$(label_of "$tag")" = "$inputs" ]; then
		echo "images.sh: $tag up to date"
		return
	fi
	t=$(date +%s%N)
	mkdir -p "$ctx/bin/image/$cmd/etc/ssl/certs" "$ctx/integration/go-image"
	cp -r integration/go-image/rootfs "$ctx/integration/go-image/"
	cp Dockerfile "$ctx/"
	ln "$WORK/bin/$cmd" "$ctx/bin/image/$cmd/app" 2>/dev/null || cp "$WORK/bin/$cmd" "$ctx/bin/image/$cmd/app"
	cp "$CERTS" "$ctx/bin/image/$cmd/etc/ssl/certs/ca-certificates.crt"
	docker build -q --target prebuilt --build-arg RUNTIME_IMAGE=scratch --build-arg CMD="$cmd" \
		--label crashgame.inputs="$inputs" -t "$tag" "$ctx" 2> >(grep -v -e DEPRECATED -e 'legacy builder' -e buildx -e '^ *$' >&2) >/dev/null
	echo "images.sh: built $tag in $(ms "$t") ms ($(docker image inspect -f '{{.Size}}' "$tag") bytes)"
}

# from_source TAG CMD: the Dockerfile's default target, offline (see the header).
from_source() {
	local tag=$1 cmd=$2 t inputs
	inputs=$( { git ls-files -co --exclude-standard -- go.mod go.sum api cmd gen internal Dockerfile integration/go-image |
		sort | xargs -d '\n' cat 2>/dev/null; } | sha256sum | cut -c1-24)
	if [ -z "${FORCE:-}" ] && [ "$(label_of "$tag")" = "src-$inputs" ]; then
		echo "images.sh: $tag up to date (from source)"
		return
	fi
	t=$(date +%s%N)
	docker build -q --build-arg GO_IMAGE=crashgame-go:1.26 --build-arg RUNTIME_IMAGE=scratch \
		--build-arg CMD="$cmd" --build-arg GOPROXY=file:///src/.goproxy --build-arg GOSUMDB=off \
		--label crashgame.inputs="src-$inputs" -t "$tag" -f Dockerfile "$WORK/srcctx" \
		2> >(grep -v -e DEPRECATED -e 'legacy builder' -e buildx -e '^ *$' >&2) >/dev/null
	echo "images.sh: built $tag from source in $(ms "$t") ms"
}

if [ -n "${CRASHGAME_IMAGES_FROM_SOURCE:-}" ]; then
	integration/go-image/build.sh crashgame-go:1.26
	t=$(date +%s%N)
	# The sources, as the repo's .dockerignore would send them, plus a file module
	# proxy (GOPROXY=file://) of the modules the two programs need, from the host's cache.
	mkdir -p "$WORK/srcctx"
	git ls-files -co --exclude-standard -z -- go.mod go.sum api cmd gen internal Dockerfile .dockerignore integration/go-image |
		xargs -0 cp --parents -t "$WORK/srcctx"
	cache=$(go env GOMODCACHE)/cache/download
	esc() { sed -e 's/\([A-Z]\)/!\L\1/g'; }
	# every module of the graph needs its .mod; the modules of built packages their .zip.
	go mod graph | tr ' ' '\n' | grep @ | sort -u | while read -r mv; do
		p=$(printf '%s' "${mv%@*}" | esc) v=${mv#*@}
		mkdir -p "$WORK/srcctx/.goproxy/$p/@v"
		cp "$cache/$p/@v/$v.mod" "$WORK/srcctx/.goproxy/$p/@v/" 2>/dev/null || true
		cp "$cache/$p/@v/$v.info" "$WORK/srcctx/.goproxy/$p/@v/" 2>/dev/null || true
	done
	go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}}{{end}}{{end}}' ./cmd/crashgame ./cmd/operator-sim |
		sort -u | while read -r mv; do
			p=$(printf '%s' "${mv%@*}" | esc) v=${mv#*@}
			cp "$cache/$p/@v/$v.zip" "$WORK/srcctx/.goproxy/$p/@v/"
		done
	echo "images.sh: staged sources and module proxy ($(du -sh "$WORK/srcctx" | cut -f1)) in $(ms "$t") ms"
	from_source "$GAME_IMAGE" crashgame
	from_source "$SIM_IMAGE" operator-sim
else
	prebuilt "$GAME_IMAGE" crashgame
	prebuilt "$SIM_IMAGE" operator-sim
fi
prebuilt "$FRONT_IMAGE" tlsfront

# 3. NATS: nats-server at the version go.mod pins, compiled on the host, alone in a scratch image.
case "$NATS_IMAGE" in
crashgame-nats:*)
	t=$(date +%s%N)
	mkdir -p "$WORK/nats"
	CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags='-s -w' -o "$WORK/nats/nats-server" "$NATS_MODULE"
	echo "images.sh: go build nats-server $NATS_VERSION (host, static) $(ms "$t") ms"
	inputs=$(cat "$WORK/nats/nats-server" integration/nats-image/Dockerfile | sha256sum | cut -c1-24)
	if [ -z "${FORCE:-}" ] && [ "$(label_of "$NATS_IMAGE")" = "$inputs" ]; then
		echo "images.sh: $NATS_IMAGE up to date"
	else
		t=$(date +%s%N)
		cp integration/nats-image/Dockerfile "$WORK/nats/"
		docker build -q --label crashgame.inputs="$inputs" -t "$NATS_IMAGE" "$WORK/nats" \
			2> >(grep -v -e DEPRECATED -e 'legacy builder' -e buildx -e '^ *$' >&2) >/dev/null
		echo "images.sh: built $NATS_IMAGE in $(ms "$t") ms ($(docker image inspect -f '{{.Size}}' "$NATS_IMAGE") bytes)"
	fi
	;;
*) echo "images.sh: $NATS_IMAGE comes from a registry; not building it" ;;
esac
echo "images.sh: all images ready in $(ms "$t_all") ms"
