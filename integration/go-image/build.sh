#!/bin/bash
# Builds crashgame-go:1.26, the local stand-in for golang:1.26 as the Dockerfile's
# GO_IMAGE on a machine where no registry answers: the host's Go toolchain (its
# `go` is statically linked) in a FROM-scratch image, with the host's CA bundle.
# Enough for CGO_ENABLED=0 builds with exec-form RUN (there is no shell inside).
#
# Usage: integration/go-image/build.sh [tag]      (default crashgame-go:1.26)
#   FORCE=1   rebuild even when the tag exists with the same recipe
#
# Idempotent: the image carries a label with a hash of this script and of the
# host's `go version`; when it matches, the script prints "up to date" and exits.
# Only the Dockerfile's from-source target needs this image (see README.md);
# integration/images.sh builds the suites' images without it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TAG=${1:-crashgame-go:1.26}
export DOCKER_API_VERSION=${DOCKER_API_VERSION:-1.41}   # newer CLI vs Debian's dockerd 20.10

command -v go >/dev/null || { echo >&2 "go-image: no go on PATH"; exit 1; }
docker info >/dev/null 2>&1 || { echo >&2 "go-image: no Docker engine answers (docker info failed)"; exit 1; }
GOROOT=$(go env GOROOT)
CERTS=/etc/ssl/certs/ca-certificates.crt
[ -s "$CERTS" ] || { echo >&2 "go-image: no CA bundle at $CERTS (apt-get install ca-certificates)"; exit 1; }

recipe=$( { cat "$HERE/build.sh"; go version; } | sha256sum | cut -c1-16)
if [ -z "${FORCE:-}" ] && [ "$(docker image inspect -f '{{index .Config.Labels "crashgame.recipe"}}' "$TAG" 2>/dev/null)" = "$recipe" ]; then
	echo "go-image: $TAG up to date"
	exit 0
fi

t0=$(date +%s%N)
tmp=$(mktemp -d /tmp/go-image.XXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -m 1777 "$tmp/tmp"
mkdir -p "$tmp/etc/ssl/certs" "$tmp/src" "$tmp/root"
cp "$CERTS" "$tmp/etc/ssl/certs/ca-certificates.crt"
cp "$HERE/rootfs/etc/passwd" "$HERE/rootfs/etc/group" "$tmp/etc/"
# The toolchain without tests, docs and test data (about 250 MB instead of 500).
tar --numeric-owner -cf - -C "$tmp" tmp etc src root -C "$(dirname "$GOROOT")" \
	--exclude=go/test --exclude=go/doc --exclude=go/api --exclude=go/misc --exclude='go/pkg/*/testdata' \
	--exclude='go/src/*/testdata' --transform 's,^go\(/\|$\),usr/local/go\1,' "$(basename "$GOROOT")" |
	docker import \
		-c 'ENV PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin' -c 'ENV GOROOT=/usr/local/go' \
		-c 'ENV GOPATH=/go' -c 'ENV GOCACHE=/root/.cache/go-build' -c 'ENV HOME=/root' \
		-c 'ENV CGO_ENABLED=0' -c 'ENV GOTOOLCHAIN=local' -c 'WORKDIR /src' \
		-c "LABEL crashgame.recipe=$recipe" \
		- "$TAG" >/dev/null
echo "go-image: built $TAG in $(( ($(date +%s%N) - t0) / 1000000 )) ms ($(docker image inspect -f '{{.Size}}' "$TAG") bytes)"
