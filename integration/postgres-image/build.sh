#!/bin/bash
# Builds the PostgreSQL 15 image the integration suites run, FROM scratch, out of
# the host's installed postgresql-15 and its ldd-resolved libraries. No registry,
# no network. See README.md beside this file for why and how.
#
# Usage: integration/postgres-image/build.sh [tag]     (default crashgame-postgres:15)
#   FORCE=1   rebuild even when the tag already exists and is current
#
# Idempotent: when `docker image inspect` finds the tag and its recipe label matches
# this directory's files and the host's postgres version, it prints "up to date" and
# exits in well under a second. Produces "$TAG-nobake" (initdb at container start,
# like the official image) and "$TAG" (the same with a pre-initdb'ed template
# cluster in $PGDATA: ready about 2 s sooner).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TAG=${1:-crashgame-postgres:15}
PG=/usr/lib/postgresql/15
export DOCKER_API_VERSION=${DOCKER_API_VERSION:-1.41}   # newer CLI vs Debian's dockerd 20.10

command -v docker >/dev/null || { echo >&2 "build.sh: no docker CLI on PATH"; exit 1; }
docker info >/dev/null 2>&1 || { echo >&2 "build.sh: no Docker engine answers (docker info failed)"; exit 1; }
[ -x $PG/bin/postgres ] || {
	echo >&2 "build.sh: needs the host's postgresql-15 (apt-get install postgresql-15)"
	echo >&2 "          or, on a machine with a registry, CRASHGAME_POSTGRES_IMAGE=postgres:15"
	exit 1
}

# One build at a time per tag (make -j, two suites starting together).
LOCK="/tmp/crashgame-postgres-image.$(printf '%s' "$TAG" | tr -c 'A-Za-z0-9._-' '_').lock"
exec 9>"$LOCK"
flock 9

# The recipe label: what this image was built from. A change to any file here or an
# upgrade of the host's postgres makes the existing image stale.
RECIPE=$( { cat "$HERE/build.sh" "$HERE/Dockerfile" "$HERE/Dockerfile.baked" "$HERE/docker-entrypoint.sh"
            "$PG/bin/postgres" --version; } | sha256sum | cut -c1-16)
if [ "${FORCE:-}" != 1 ]; then
	have=$(docker image inspect -f '{{index .Config.Labels "crashgame.recipe"}}' "$TAG" 2>/dev/null || true)
	if [ "$have" = "$RECIPE" ]; then
		echo "$TAG is up to date (recipe $RECIPE); FORCE=1 rebuilds"
		exit 0
	fi
	[ -n "$have" ] && echo "$TAG exists but was built from another recipe ($have != $RECIPE): rebuilding"
fi

old_ids=$(docker image inspect -f '{{.Id}}' "$TAG" "$TAG-nobake" 2>/dev/null || true)
S=$(mktemp -d /tmp/pg-rootfs.XXXXXX)     # staged root file system
CTX=$(mktemp -d /tmp/pg-context.XXXXXX)  # docker build context: Dockerfile + rootfs.tar only
cid=
cleanup() {
	rm -rf "$S" "$S.err" "$CTX"
	[ -n "$cid" ] && docker rm -f "$cid" >/dev/null 2>&1 || true
}
trap cleanup EXIT
t0=$(date +%s.%N)
mkdir -p "$S"/usr/{bin,sbin,lib/x86_64-linux-gnu,lib64,share,local/bin} "$S"/etc "$S"/tmp \
         "$S"/var/run/postgresql "$S"/var/lib/postgresql/data "$S"/docker-entrypoint-initdb.d
ln -s usr/bin "$S/bin"; ln -s usr/lib "$S/lib"; ln -s usr/lib64 "$S/lib64"; ln -s usr/sbin "$S/sbin"

# 1. postgres itself (binaries, server modules minus JIT/LLVM, share data), tzdata, C.UTF-8
#    (tar pipe rather than `cp -a --parents`, which fails on coreutils 9.1)
tar -C / -cf - --exclude='llvmjit*' --exclude=bitcode --exclude=man \
    ${PG#/} usr/share/postgresql/15 usr/share/zoneinfo usr/lib/locale/C.utf8 | tar -C "$S" -xf -
rm -rf "$S"/usr/share/zoneinfo/right "$S"/usr/share/zoneinfo/posix
# 2. a shell (pg_ctl/initdb use system()/popen -> /bin/sh), gzip for *.sql.gz, locale (initdb runs `locale -a`)
cp -L /usr/bin/dash "$S/usr/bin/dash"; ln -s dash "$S/usr/bin/sh"
#    + cat/grep/awk: testcontainers' wait.ForListeningPort "internal check" execs
#    `/bin/sh -c 'cat /proc/net/tcp* | awk .. | grep ..'`; without them it times out.
#    A few more coreutils for `docker exec` debugging.
for b in gzip locale cat grep sed ls rm mkdir chmod id sleep env; do cp -L /usr/bin/$b "$S/usr/bin/"; done
cp -L /usr/bin/mawk "$S/usr/bin/awk"
printf '#!/bin/sh\nexec gzip -d "$@"\n' > "$S/usr/bin/gunzip"; chmod 755 "$S/usr/bin/gunzip"
# 3. every shared library needed by anything ELF we copied (ldd, dereferenced)
{ find "$S" -type f \( -perm -u+x -o -name '*.so*' \) -print0 | xargs -0 ldd 2>/dev/null || true; } |
  awk '/=> \//{print $3} /^\t\/lib64/{print $1}' | sort -u |
  while read -r lib; do
    case "$lib" in /lib64/*) dst="$S/usr/lib64/${lib##*/}";; *) dst="$S/usr/lib/x86_64-linux-gnu/${lib##*/}";; esac
    [ -e "$dst" ] || cp -L "$lib" "$dst"
  done
echo /usr/lib/x86_64-linux-gnu > "$S/etc/ld.so.conf"; ldconfig -r "$S"
# 4. users, nss, entrypoint, ownership (postgres = 999:999 like the official image)
printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999::/var/lib/postgresql:/bin/sh\n' > "$S/etc/passwd"
printf 'root:x:0:\npostgres:x:999:\n' > "$S/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$S/etc/nsswitch.conf"
install -m 755 "$HERE/docker-entrypoint.sh" "$S/usr/local/bin/docker-entrypoint.sh"
chmod 1777 "$S/tmp"; chown -R 999:999 "$S/var/run/postgresql" "$S/var/lib/postgresql"
chmod 3777 "$S/var/run/postgresql"; chmod 700 "$S/var/lib/postgresql/data"
t1=$(date +%s.%N)
# 5. FROM scratch + ADD rootfs.tar (docker import can't set STOPSIGNAL; SIGINT = fast shutdown).
#    The context is a temp dir, so concurrent builds and the repo stay clean.
tar --numeric-owner -C "$S" -cf "$CTX/rootfs.tar" .
cp "$HERE/Dockerfile" "$CTX/Dockerfile"
# (the legacy builder's deprecation notice on stderr is shown only when a build fails)
build() { docker build -q "$@" >/dev/null 2>"$S.err" || { cat "$S.err" >&2; exit 1; }; }
build -t "$TAG-nobake" "$CTX"
# 6. bake a template cluster (superuser "postgres", no password; entrypoint renames/sets at start)
build --label "crashgame.recipe=$RECIPE" --build-arg BASE="$TAG-nobake" -t "$TAG" - < "$HERE/Dockerfile.baked"
t2=$(date +%s.%N)
echo "staging: $(echo "$t1-$t0"|bc)s  docker build x2: $(echo "$t2-$t1"|bc)s  total: $(echo "$t2-$t0"|bc)s  rootfs: $(du -sh "$S"|cut -f1)"
docker image inspect -f '{{.Size}} bytes, stop={{.Config.StopSignal}} user={{.Config.User}}' "$TAG"
# 7. self-test: first start must log "ready to accept connections" twice and accept SQL
cid=$(docker run -d -e POSTGRES_PASSWORD=t -e POSTGRES_USER=t -e POSTGRES_DB=t "$TAG")
for _ in $(seq 100); do
	[ "$(docker logs "$cid" 2>&1 | grep -c 'ready to accept connections')" -ge 2 ] && break
	sleep 0.1
done
if docker exec "$cid" psql -U t -d t -Atc 'select 42' | grep -qx 42; then
	echo "self-test OK: $TAG"
else
	docker logs "$cid" >&2
	docker rmi "$TAG" >/dev/null 2>&1 || true   # never leave a broken image that the skip check trusts
	echo >&2 "build.sh: self-test failed"
	exit 1
fi
# 8. drop the images this build replaced (dangling now; kept if a container still uses them)
for id in $old_ids; do
	docker image inspect -f '{{.RepoTags}}' "$id" 2>/dev/null | grep -qx '\[\]' && docker rmi "$id" >/dev/null 2>&1 || true
done
