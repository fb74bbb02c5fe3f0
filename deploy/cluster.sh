#!/bin/bash
# Brings the cluster of deploy/compose.yaml up or down with docker-compose
# (Debian 12's 1.29), as project "crashgame" (CRASHGAME_PROJECT: another name,
# for a second cluster on the same host beside other ports). `make cluster`
# builds the images first (`make images`); this script pulls nothing.
#
#   deploy/cluster.sh check  name every host package `make cluster` needs and
#                            lacks, with the apt-get line that installs them
#                            (make cluster runs it before building anything)
#   deploy/cluster.sh up     make the wallet front's trial CA when missing, start
#                            everything, wait until the load balancer answers
#                            /readyz through a replica, print the lobby's URL
#   deploy/cluster.sh roll   recreate game1, game2, game3 one at a time (a rolling deploy)
#   deploy/cluster.sh down   stop and remove the containers, their network and
#                            their data (PostgreSQL's tables, operator-sim's ledger)
#   deploy/cluster.sh load [loadgen flags]
#                            run the load tool (cmd/loadgen) against the running
#                            cluster through its load balancer (reached on the
#                            compose network, --connect, not through the
#                            published port's userland proxy): players each name
#                            their own address (--forwarded), every replica's
#                            /metrics is read (--replicas), NATS's /varz too
#                            (--nats-monitor) and the reconciliation
#                            reads PostgreSQL (--game-db), all at their addresses
#                            on the compose network, which a Linux host running
#                            the Docker engine reaches directly; nothing more is
#                            published. E.g. `deploy/cluster.sh load --players 1000`
#   deploy/cluster.sh leader which replica leads each game's table, at which
#                            fencing epoch, from every replica's /metrics
#   deploy/cluster.sh status the whole cluster at a glance: each replica's
#                            container state, readiness (/readyz), streams open,
#                            wallet breakers and movement queue; the leader of
#                            each table and its epoch (as `leader`); NATS
#                            (/healthz, connections, slow consumers); PostgreSQL
#                            (pg_isready, connections, movements by status, the
#                            oldest pending one); the load balancer's view of
#                            each replica (UP, DOWN, MAINT). Exit code 0 when
#                            every replica is ready, NATS and PostgreSQL answer
#                            and each table has exactly one leader; 1 otherwise
#   deploy/cluster.sh reconcile [crashgame reconcile flags]
#                            `crashgame reconcile` from the host against the
#                            cluster: the replicas' installation file with
#                            PostgreSQL at its compose address, operator-sim's
#                            admin API on the lobby port. E.g.
#                            `deploy/cluster.sh reconcile --initial-balance 1000000`
#   deploy/cluster.sh roll-under-load [loadgen flags]
#                            the load tool plays (as `load`, ROLL_ROUNDS rounds,
#                            default 30) while `roll` recreates the replicas one
#                            at a time: ROLL_AFTER seconds (30) after its
#                            players play, the roll starts;
#                            when the roll ends, the tool plays its last rounds
#                            and prints its summary (stream drops and reopenings,
#                            void rounds, bets and cashouts refused and why,
#                            latency percentiles, the reconciliation). The roll's
#                            lines carry the wall clock, and each starts a phase
#                            of the load tool's table by phase (--phases):
#                            bets, cashouts and their refusals, p99s,
#                            reconnections and void rounds, before, during each
#                            replica's recreation and after the roll.
#   deploy/cluster.sh pause-under-load [loadgen flags]
#                            the load tool plays (as `load`, PAUSE_ROUNDS rounds,
#                            default 12) with its players behind PAUSE_ADDRESSES
#                            client addresses (default 20: --addresses);
#                            PAUSE_AFTER seconds (30) after they play,
#                            PAUSE_REPLICA (default: one that leads no
#                            table at that moment) is `docker
#                            pause`d for PAUSE_SECONDS (default 20), then
#                            unpaused; the summary gives the reconnections' times
#                            (from the drop noticed to the new stream open). E.g.
#                            `deploy/cluster.sh pause-under-load --players 2000`
#
# Settings: the variables listed at the top of deploy/compose.yaml, and
# CLUSTER_WAIT (seconds to wait for the first ready replica, default 120).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PROJECT=${CRASHGAME_PROJECT:-crashgame}
COMPOSE=(docker-compose -f "$HERE/compose.yaml" -p "$PROJECT")
PORT=${CRASHGAME_PORT:-8080}
LOBBY_PORT=${CRASHGAME_LOBBY_PORT:-8081}
BIND=${CRASHGAME_BIND:-127.0.0.1}
HOST=localhost # where the published ports answer on this machine
case "$BIND" in 127.0.0.1 | 0.0.0.0) ;; *) HOST=$BIND ;; esac
export CRASHGAME_BASE_URL=${CRASHGAME_BASE_URL:-http://$HOST:$PORT}
export DOCKER_API_VERSION=${DOCKER_API_VERSION:-1.41}   # newer CLI vs Debian's dockerd 20.10

# check: what `make cluster` needs on the host, all of it named at once with
# the Debian packages that bring it, before anything is built. The PostgreSQL
# and load balancer images are built from the host's postgresql-15 and
# haproxy packages (integration/images.sh) unless a registry image is named.
check() {
	local pkgs=() other=() want
	command -v docker >/dev/null || pkgs+=(docker.io)
	command -v docker-compose >/dev/null || pkgs+=(docker-compose)
	command -v curl >/dev/null || pkgs+=(curl)
	command -v openssl >/dev/null || pkgs+=(openssl)
	[ -s /etc/ssl/certs/ca-certificates.crt ] || pkgs+=(ca-certificates)
	case "${CRASHGAME_POSTGRES_IMAGE:-crashgame-postgres:15}" in
	crashgame-postgres:*) [ -x /usr/lib/postgresql/15/bin/postgres ] || pkgs+=(postgresql-15) ;;
	esac
	case "${CRASHGAME_LB_IMAGE:-crashgame-lb:dev}" in
	crashgame-lb:*) [ -x /usr/sbin/haproxy ] || pkgs+=(haproxy) ;;
	esac
	want=$(sed -n 's/^go //p' "$HERE/../go.mod")
	command -v go >/dev/null || other+=("Go $want or later (https://go.dev/dl; Debian 12's golang is older): the programs are compiled on the host")
	if ((${#pkgs[@]} + ${#other[@]})); then
		echo >&2 "cluster: this host lacks what make cluster needs:"
		if ((${#pkgs[@]})); then echo >&2 "  sudo apt-get install -y ${pkgs[*]}"; fi
		for want in "${other[@]}"; do echo >&2 "  $want"; done
		exit 1
	fi
	docker info >/dev/null 2>&1 || {
		echo >&2 "cluster: no Docker engine answers (docker info failed): start it (sudo systemctl start docker) or join the docker group"
		exit 1
	}
}

# trial_ca: the certificate of the wallet's HTTPS front (name "wallet" on the
# compose network), signed by a CA made here for this trial only. The CA's key
# is thrown away once it has signed. The front's key is readable by everyone:
# HAProxy runs as user 65532 and reads it through a bind mount. It protects
# nothing but this trial's wallet calls on one Docker network.
trial_ca() {
	local d="$HERE/certs" t
	[ -s "$d/wallet-ca.pem" ] && [ -s "$d/wallet.pem" ] && return
	command -v openssl >/dev/null || { echo >&2 "cluster: needs openssl (apt-get install openssl)"; exit 1; }
	mkdir -p "$d"
	t=$(mktemp -d)
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
		-subj "/CN=crashgame trial wallet CA" -keyout "$t/ca.key" -out "$t/ca.pem" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=wallet" \
		-keyout "$t/wallet.key" -out "$t/wallet.csr" 2>/dev/null
	printf 'subjectAltName=DNS:wallet\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' >"$t/ext"
	openssl x509 -req -in "$t/wallet.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial \
		-days 825 -extfile "$t/ext" -out "$t/wallet.crt" 2>/dev/null
	cat "$t/wallet.crt" "$t/wallet.key" >"$d/wallet.pem"
	cp "$t/ca.pem" "$d/wallet-ca.pem"
	chmod 644 "$d/wallet.pem" "$d/wallet-ca.pem"
	rm -rf "$t"
	echo "cluster: made the wallet front's trial CA in deploy/certs/"
}

up() {
	local deadline url=http://$HOST:$PORT
	trial_ca
	"${COMPOSE[@]}" up -d
	deadline=$(($(date +%s) + ${CLUSTER_WAIT:-120}))
	printf 'cluster: waiting for the load balancer to answer %s/readyz through a replica' "$url"
	until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/readyz" || true)" = 200 ]; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo
			echo >&2 "cluster: no replica became ready within ${CLUSTER_WAIT:-120} s; their last lines:"
			"${COMPOSE[@]}" logs --tail 20 game1 game2 game3 >&2 || true
			"${COMPOSE[@]}" ps >&2 || true
			exit 1
		fi
		printf .
		sleep 1
	done
	echo
	"${COMPOSE[@]}" ps
	cat <<EOF

cluster: up. The game: $CRASHGAME_BASE_URL (the load balancer)
         The lobby (operator-sim, 10 funded players): http://$HOST:$LOBBY_PORT/
         Logs: docker-compose -f deploy/compose.yaml -p $PROJECT logs -f game1
         Down: make cluster-down
EOF
}

down() {
	"${COMPOSE[@]}" down -v --remove-orphans
}

# roll: a rolling restart (or deploy, after `make images` tagged a new image):
# one replica at a time, recreated (SIGTERM: a leader finishes its round and
# hands its tables over at the round boundary; compose waits up to the
# service's stop_grace_period), then the next only once the new one answers
# /readyz 200 and the load balancer has had time to count it back in (rise 2
# checks, 1 s apart). The new replica is asked at its address on the compose
# network, which a Linux host running the Docker engine reaches directly.
roll() {
	local g cid ip deadline
	for g in game1 game2 game3; do
		echo "cluster: recreating $g"
		"${COMPOSE[@]}" up -d --no-deps --force-recreate "$g"
		cid=$("${COMPOSE[@]}" ps -q "$g")
		ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$cid")
		deadline=$(($(date +%s) + ${CLUSTER_WAIT:-120}))
		until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$ip:8080/readyz" || true)" = 200 ]; do
			if [ "$(date +%s)" -ge "$deadline" ]; then
				echo >&2 "cluster: $g ($ip) is not ready after ${CLUSTER_WAIT:-120} s; stopping the roll. Its last lines:"
				"${COMPOSE[@]}" logs --tail 20 "$g" >&2 || true
				exit 1
			fi
			sleep 0.5
		done
		sleep 3
		echo "cluster: $g is ready and back in rotation"
	done
}

# address: the address of a service's container on the compose network.
address() {
	local cid
	cid=$("${COMPOSE[@]}" ps -q "$1")
	[ -n "$cid" ] || { echo >&2 "cluster: $1 is not running (deploy/cluster.sh up first)"; exit 1; }
	docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$cid"
}

# load: cmd/loadgen against this cluster, with the development secrets of
# compose.yaml (or the ones exported). Extra arguments go to loadgen.
load() {
	local replicas="" g bin rc=0
	for g in game1 game2 game3; do
		replicas+="${replicas:+,}$g=http://$(address "$g"):9090"
	done
	bin=$(mktemp -d)
	(cd "$HERE/.." && go build -o "$bin/loadgen" ./cmd/loadgen)
	# The players name the public address (--url: the game's Origin check and
	# launch URLs use it) but connect to the balancer on the compose network
	# (--connect), as the other tools reach the replicas and PostgreSQL: the
	# published port goes through Docker's userland proxy, which died under a
	# reconnection wave of 2,000 players (its process left defunct, the port
	# refusing every connection) and is not what a player's path looks like.
	"$bin/loadgen" --url "$CRASHGAME_BASE_URL" --connect "$(address lb):8080" \
		--operator-url "http://$(address operator-sim):8081" \
		--operator dev --secret "${CRASHGAME_OPERATOR_SECRET:-dev-secret-change-me-0123456789abcdef}" \
		--forwarded --replicas "$replicas" --nats-monitor "http://$(address nats):8222" \
		--game-db "postgres://crash:${CRASHGAME_DB_PASSWORD:-crash-dev-password}@$(address postgres):5432/crash?sslmode=disable" \
		"$@" || rc=$?
	rm -rf "$bin"
	return "$rc"
}

# await_playing waits until the load tool of pid, writing to log, says its
# players play; it fails when the tool ends before.
await_playing() {
	until grep -q '; playing ' "$2"; do
		if ! kill -0 "$1" 2>/dev/null; then
			echo >&2 "cluster: the load tool ended before playing"
			wait "$1" || true
			return 1
		fi
		sleep 1
	done
}

# roll_under_load: `load` in the background, `roll` once its players play,
# then the load tool's end (its summary). The exit code is the load tool's
# (1: a money invariant broke), or the roll's when the roll failed.
roll_under_load() {
	local log marks pid rc=0
	log=$(mktemp)
	marks=$(mktemp)
	(load --rounds "${ROLL_ROUNDS:-30}" --phases "$marks" "$@" 2>&1 | tee "$log") &
	pid=$!
	await_playing "$pid" "$log" || { rm -f "$log" "$marks"; return 1; }
	sleep "${ROLL_AFTER:-30}" # rounds played before the roll: the table's first phase
	echo "[$(date +%T.%3N)] cluster: the load tool plays; rolling game1, game2, game3"
	# Each line of the roll starts a phase of the load tool's table
	# (--phases: "<unix ms> <label>"). pipefail: the pipeline fails when the
	# roll does.
	if ! roll 2>&1 | while IFS= read -r line; do
		case "$line" in
		cluster:*) echo "$(date +%s%3N) ${line#cluster: }" >>"$marks" ;; # the roll's own steps, not docker-compose's lines
		esac
		echo "[$(date +%T.%3N)] $line"
	done; then
		rc=1
	fi
	echo "$(date +%s%3N) after the roll" >>"$marks"
	echo "[$(date +%T.%3N)] cluster: roll over; the load tool plays its last rounds"
	wait "$pid" || rc=$?
	rm -f "$log" "$marks"
	return "$rc"
}

# pause_under_load: `load` in the background, its players behind a few
# client addresses, a replica paused once they play and unpaused after
# PAUSE_SECONDS, then the load tool's end (its summary). An interrupted run
# unpauses the replica. The exit code is the load tool's.
pause_under_load() {
	local log marks pid cid rc=0 replica secs=${PAUSE_SECONDS:-20}
	log=$(mktemp)
	marks=$(mktemp)
	(load --rounds "${PAUSE_ROUNDS:-12}" --addresses "${PAUSE_ADDRESSES:-20}" --phases "$marks" "$@" 2>&1 | tee "$log") &
	pid=$!
	await_playing "$pid" "$log" || { rm -f "$log" "$marks"; return 1; }
	sleep "${PAUSE_AFTER:-30}" # rounds played before the pause: the table's first phase
	replica=${PAUSE_REPLICA:-$(not_leading)}
	cid=$("${COMPOSE[@]}" ps -q "$replica")
	[ -n "$cid" ] || { echo >&2 "cluster: $replica is not running"; kill "$pid"; wait "$pid" || true; rm -f "$log" "$marks"; return 1; }
	trap 'docker unpause "$cid" >/dev/null 2>&1 || true' EXIT
	echo "[$(date +%T.%3N)] cluster: the load tool plays; pausing $replica for $secs s ($(leader | tr '\n' ' '))"
	echo "$(date +%s%3N) $replica paused" >>"$marks"
	docker pause "$cid" >/dev/null
	sleep "$secs"
	docker unpause "$cid" >/dev/null
	echo "$(date +%s%3N) $replica unpaused" >>"$marks"
	trap - EXIT
	echo "[$(date +%T.%3N)] cluster: $replica unpaused; the load tool plays its last rounds"
	wait "$pid" || rc=$?
	rm -f "$log" "$marks"
	return "$rc"
}

# not_leading: a replica that leads no table now. pause-under-load's scenario
# is a sick replica whose players reconnect elsewhere, not the leader's
# fail-over (the cluster suite kills and pauses leaders).
not_leading() {
	local g out
	out=$(leader)
	for g in game1 game2 game3; do
		if ! printf '%s\n' "$out" | grep -q "led by $g "; then
			echo "$g"
			return
		fi
	done
	echo game1
}

# status: every part of the cluster in a few lines, and an exit code that says
# whether all is well (see the header). Read-only: it changes nothing.
status() {
	local g ip cid state ready m ok=0 nip pg lbip out
	echo "replicas:"
	for g in game1 game2 game3; do
		cid=$("${COMPOSE[@]}" ps -q "$g" 2>/dev/null)
		if [ -z "$cid" ]; then
			echo "  $g: no container"
			ok=1
			continue
		fi
		state=$(docker inspect -f '{{.State.Status}}, started {{.State.StartedAt}}, restarts {{.RestartCount}}' "$cid")
		ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$cid")
		ready=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$ip:8080/readyz" || true)
		[ "$ready" = 000 ] && ready="no answer in 2 s"
		[ "$ready" = 200 ] || ok=1
		m=$(curl -sf --max-time 2 "http://$ip:9090/metrics" || true)
		printf '  %s (%s): %s; /readyz %s' "$g" "${ip:-no address}" "$state" "${ready:-no answer}"
		if [ -n "$m" ]; then
			printf '%s\n' "$m" | awk '
				$1 == "crashgame_streams_open" { streams = $2 }
				$1 ~ /^crashgame_wallet_queue_movements\{status="pending"\}/ { pending = $2 }
				$1 ~ /^crashgame_wallet_queue_movements\{status="exhausted"\}/ { exhausted = $2 }
				$1 ~ /^crashgame_wallet_breaker_state\{/ && $2 + 0 > 0 { split($1, a, "\""); open = open " " a[2] ($2 + 0 == 2 ? " (open)" : " (half-open)") }
				END {
					printf "; streams %d; queue %d pending, %d exhausted; breakers %s\n", streams, pending, exhausted, (open == "" ? "all closed" : "not closed:" open)
				}'
		else
			echo "; /metrics does not answer"
		fi
	done
	echo "tables:"
	out=$(leader)
	printf '%s\n' "$out" | sed 's/^/  /'
	if ! printf '%s\n' "$out" | grep -q 'led by' || printf '%s\n' "$out" | grep -q 'no replica leads' ||
		[ "$(printf '%s\n' "$out" | grep 'led by' | awk '{print $1}' | sort | uniq -d)" != "" ]; then
		ok=1
	fi
	echo "nats:"
	if nip=$(address nats 2>/dev/null) && [ -n "$nip" ] && [ "$(curl -sf --max-time 2 "http://$nip:8222/healthz" || true)" = '{"status":"ok"}' ]; then
		curl -sf --max-time 2 "http://$nip:8222/varz" | awk -F'[:,]' '
			/"version"/ { gsub(/[ "]/, "", $2); v = $2 }
			/"connections"/ { c = $2 + 0 }
			/"slow_consumers"/ { s = $2 + 0 }
			END { printf "  healthy, version %s, %d connections, %d slow consumers\n", v, c, s }'
	else
		echo "  not healthy (no answer to /healthz on its monitoring port)"
		ok=1
	fi
	echo "postgresql:"
	cid=$("${COMPOSE[@]}" ps -q postgres 2>/dev/null)
	if [ -n "$cid" ] && docker exec "$cid" pg_isready -q -U crash -d crash 2>/dev/null; then
		pg=$(docker exec "$cid" psql -U crash -d crash -Atc \
			"SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = 'crash'),
			        (SELECT coalesce(string_agg(status || ' ' || n, ', ' ORDER BY status), 'none') FROM (SELECT status, count(*) n FROM movements WHERE status <> 'done' GROUP BY status) q),
			        (SELECT coalesce(((extract(epoch FROM now()) * 1000)::bigint - min(created_at)) / 1000, 0) FROM movements WHERE status = 'pending')" 2>&1) || pg="the query failed: $pg"
		printf '%s\n' "$pg" | awk -F'|' 'NF == 3 { printf "  ready; %d connections; movements not done: %s; oldest pending %d s old\n", $1, $2, $3; next } { print "  ready; " $0 }'
	else
		echo "  not ready (pg_isready)"
		ok=1
	fi
	echo "load balancer:"
	if lbip=$(address lb 2>/dev/null) && [ -n "$lbip" ] && out=$(curl -sf --max-time 2 "http://$lbip:8404/stats;csv"); then
		printf '%s\n' "$out" | awk -F, '$1 == "replicas" && $2 != "BACKEND" && $2 != "FRONTEND" { printf "  %s %s, %s sessions now\n", $2, $18, $5 }'
	else
		echo "  its stats page does not answer"
		ok=1
	fi
	return "$ok"
}

# leader: which replica leads each game's table and at which fencing epoch,
# from every replica's /metrics (crashgame_cluster_leader and
# crashgame_cluster_epoch, docs/deploy.md) at its address on the compose
# network. No replica leading a game is a fail-over in progress (at most
# lease_ttl_ms) or a cluster that cannot lead (no PostgreSQL, no NATS).
leader() {
	local g ip m rows=""
	for g in game1 game2 game3; do
		if ! ip=$(address "$g" 2>/dev/null) || [ -z "$ip" ]; then
			echo "$g: not running"
			continue
		fi
		if ! m=$(curl -sf --max-time 2 "http://$ip:9090/metrics"); then
			echo "$g ($ip): its /metrics does not answer"
			continue
		fi
		rows+=$(printf '%s\n' "$m" | awk -v r="$g" -F'[{}" ]+' '
			$1 == "crashgame_cluster_leader" && $2 == "game_id=" { print r, $3, "lead", $NF }
			$1 == "crashgame_cluster_epoch" && $2 == "game_id=" { print r, $3, "epoch", $NF }')$'\n'
	done
	printf '%s' "$rows" | awk '
		NF == 4 { games[$2] = 1; if ($3 == "lead" && $4 + 0 == 1) lead[$2] = lead[$2] " " $1; if ($3 == "epoch") ep[$2, $1] = $4 + 0 }
		END {
			for (g in games) {
				if (!(g in lead)) { printf "%s: no replica leads it now\n", g; continue }
				n = split(substr(lead[g], 2), rs, " ")
				for (i = 1; i <= n; i++) printf "%s: led by %s at epoch %d\n", g, rs[i], ep[g, rs[i]]
			}
		}'
}

# reconcile: crashgame reconcile (cmd/crashgame) from the host against this
# cluster: the replicas' installation file (crashgame.yaml) with PostgreSQL at
# its address on the compose network instead of the name "postgres", the
# development secrets of compose.yaml (or the ones exported), operator-sim's
# admin API on the lobby port. Extra arguments go to crashgame reconcile
# (--initial-balance N, --player ID, --json). Exit status: reconcile's.
reconcile() {
	local db tmp rc=0
	db=$(address postgres)
	tmp=$(mktemp -d)
	(cd "$HERE/.." && go build -o "$tmp/crashgame" ./cmd/crashgame)
	sed "s|@postgres:5432/|@$db:5432/|" "$HERE/crashgame.yaml" >"$tmp/crashgame.yaml"
	CRASHGAME_DB_PASSWORD=${CRASHGAME_DB_PASSWORD:-crash-dev-password} \
		CRASHGAME_OPERATOR_SECRET=${CRASHGAME_OPERATOR_SECRET:-dev-secret-change-me-0123456789abcdef} \
		CRASHGAME_OPERATOR_API_KEY=${CRASHGAME_OPERATOR_API_KEY:-dev-api-key-change-me} \
		CRASHGAME_SEED_KEY=${CRASHGAME_SEED_KEY:-0de5eedc0de5eedc0de5eedc0de5eedc0de5eedc0de5eedc0de5eedc0de5eed1} \
		CRASHGAME_SEEDING_WINDOW_MS=${CRASHGAME_SEEDING_WINDOW_MS:-10000} CRASHGAME_REVEAL_WINDOW_MS=${CRASHGAME_REVEAL_WINDOW_MS:-10000} \
		CRASHGAME_PROFILING=${CRASHGAME_PROFILING:-false} REPLICA=host \
		"$tmp/crashgame" reconcile --config "$tmp/crashgame.yaml" --operator-sim "http://$HOST:$LOBBY_PORT" "$@" || rc=$?
	rm -rf "$tmp"
	return "$rc"
}

case "${1:-}" in
check) check ;;
up)
	check
	up
	;;
leader) leader ;;
status) status ;;
reconcile)
	shift
	reconcile "$@"
	;;
down) down ;;
roll) roll ;;
load)
	shift
	load "$@"
	;;
roll-under-load)
	shift
	roll_under_load "$@"
	;;
pause-under-load)
	shift
	pause_under_load "$@"
	;;
*)
	echo >&2 "usage: deploy/cluster.sh check|up|down|roll|leader|status|load|roll-under-load|pause-under-load [loadgen flags]|reconcile [reconcile flags]"
	exit 2
	;;
esac
