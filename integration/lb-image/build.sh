#!/bin/bash
# Builds the load balancer image of the cluster deployment (deploy/compose.yaml),
# FROM scratch, out of the host's installed Debian haproxy package and exactly
# the shared libraries ldd lists for it. No registry, no network. See README.md
# beside this file.
#
# Usage: integration/lb-image/build.sh [tag]     (default $CRASHGAME_LB_IMAGE, else crashgame-lb:dev)
#   FORCE=1   rebuild even when the tag exists and is current
#
# Idempotent: the image carries a label crashgame.inputs, a hash of this
# script, the Dockerfile, the haproxy binary and every library it loads; when
# the tag exists with the same hash the script prints "up to date" and exits.
# An upgrade of the host's haproxy or of one of its libraries rebuilds.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TAG=${1:-${CRASHGAME_LB_IMAGE:-crashgame-lb:dev}}
HAPROXY=/usr/sbin/haproxy
LIBDIR=usr/lib/x86_64-linux-gnu
export DOCKER_API_VERSION=${DOCKER_API_VERSION:-1.41}   # newer CLI vs Debian's dockerd 20.10
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

command -v docker >/dev/null || { echo >&2 "lb-image: no docker CLI on PATH"; exit 1; }
docker info >/dev/null 2>&1 || { echo >&2 "lb-image: no Docker engine answers (docker info failed)"; exit 1; }
[ -x "$HAPROXY" ] || {
	echo >&2 "lb-image: needs the host's haproxy (apt-get install haproxy; Debian 12 has 2.6)"
	echo >&2 "          or, where a registry answers, CRASHGAME_LB_IMAGE=haproxy:2.6"
	exit 1
}
[ -d "/$LIBDIR" ] || { echo >&2 "lb-image: expects x86_64 Debian library paths (/$LIBDIR)"; exit 1; }

# One build at a time per tag (make -j, two suites starting together).
exec 9>"/tmp/crashgame-lb-image.$(printf '%s' "$TAG" | tr -c 'A-Za-z0-9._-' '_').lock"
flock 9

# Every file ldd resolves (the dynamic loader included), dereferenced.
libs=$(ldd "$HAPROXY" | awk '/=> \//{print $3} /^\t\/lib64\//{print $1}' | sort -u)
[ -n "$libs" ] || { echo >&2 "lb-image: ldd listed no library for $HAPROXY"; exit 1; }
# shellcheck disable=SC2086 # one path per word
inputs=$(cat "$HERE/build.sh" "$HERE/Dockerfile" "$HAPROXY" $libs | sha256sum | cut -c1-24)
if [ -z "${FORCE:-}" ] &&
	[ "$(docker image inspect -f '{{index .Config.Labels "crashgame.inputs"}}' "$TAG" 2>/dev/null || true)" = "$inputs" ]; then
	echo "lb-image: $TAG up to date"
	exit 0
fi

t0=$(date +%s%N)
old_id=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
S=$(mktemp -d /tmp/lb-rootfs.XXXXXX)    # staged root file system
CTX=$(mktemp -d /tmp/lb-context.XXXXXX) # docker build context: Dockerfile + rootfs.tar
cid=
cleanup() {
	rm -rf "$S" "$CTX"
	if [ -n "$cid" ]; then docker rm -f "$cid" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# 1. The layout of a merged-/usr Debian: /lib and /lib64 are links into /usr.
mkdir -p "$S/usr/sbin" "$S/$LIBDIR" "$S/usr/lib64" "$S/etc" "$S/tmp" "$S/usr/local/etc/haproxy"
ln -s usr/lib "$S/lib"
ln -s usr/lib64 "$S/lib64"
chmod 1777 "$S/tmp"

# 2. The binary and its libraries. cp -L: ldd names links (libssl.so.3 ->
#    libssl.so.3.0.x); the image gets the file under the name the loader asks for.
cp -L "$HAPROXY" "$S/usr/sbin/haproxy"
for lib in $libs; do
	case "$lib" in
	/lib64/*) cp -L "$lib" "$S/usr/lib64/${lib##*/}" ;;
	*) cp -L "$lib" "$S/$LIBDIR/${lib##*/}" ;;
	esac
done
echo "/$LIBDIR" >"$S/etc/ld.so.conf"
ldconfig -r "$S"

# 3. What glibc reads at run time: users (for logs and `docker exec id`), the
#    name service switch (the servers of haproxy.cfg are names that Docker's
#    DNS resolves; files and dns are built into glibc 2.36).
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' >"$S/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$S/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$S/etc/nsswitch.conf"

# 4. FROM scratch + ADD rootfs.tar (ADD keeps the modes; STOPSIGNAL needs a Dockerfile).
tar --numeric-owner --owner=0 --group=0 -C "$S" -cf "$CTX/rootfs.tar" .
cp "$HERE/Dockerfile" "$CTX/Dockerfile"
docker build -q --label crashgame.inputs="$inputs" -t "$TAG" "$CTX" \
	2> >(grep -v -e DEPRECATED -e 'legacy builder' -e buildx -e '^ *$' >&2) >/dev/null

# 5. Self-test: the image checks a configuration and answers through it on a
#    published loopback port. The configuration is copied into the created
#    container (docker cp), so this works with a remote engine too. A failing
#    self-test removes the tag: the up-to-date check must never trust a broken image.
fail() {
	echo >&2 "lb-image: self-test failed: $1"
	[ -n "$cid" ] && docker logs "$cid" >&2 2>&1 || true
	docker rmi -f "$TAG" >/dev/null 2>&1 || true
	exit 1
}
cat >"$CTX/selftest.cfg" <<'EOF'
global
    log stdout format raw local0 info
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend selftest
    bind :8080
    http-request return status 200 content-type text/plain string "lb-image self-test" if { path /selftest }
EOF
cid=$(docker create -p 127.0.0.1::8080 "$TAG")
docker cp "$CTX/selftest.cfg" "$cid:/usr/local/etc/haproxy/haproxy.cfg"
docker start "$cid" >/dev/null
port=$(docker port "$cid" 8080/tcp | head -n1 | sed 's/.*://')
[ -n "$port" ] || fail "no published port"
body=
for _ in $(seq 50); do
	body=$(curl -fsS --max-time 1 "http://127.0.0.1:$port/selftest" 2>/dev/null || true)
	[ "$body" = "lb-image self-test" ] && break
	[ "$(docker inspect -f '{{.State.Running}}' "$cid")" = true ] || fail "haproxy exited"
	sleep 0.1
done
[ "$body" = "lb-image self-test" ] || fail "no answer on 127.0.0.1:$port"
docker rm -f "$cid" >/dev/null
cid=

# 6. Drop the image this build replaced (dangling now; kept while a container uses it).
if [ -n "$old_id" ] && [ "$(docker image inspect -f '{{.Id}}' "$TAG")" != "$old_id" ]; then
	docker rmi "$old_id" >/dev/null 2>&1 || true
fi
echo "lb-image: built $TAG ($("$HAPROXY" -v | head -n1 | cut -d' ' -f1-3)) in $(ms "$t0") ms ($(docker image inspect -f '{{.Size}}' "$TAG") bytes), self-test OK"
