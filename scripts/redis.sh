#!/usr/bin/env bash
# Throwaway Redis servers for the test suite (no Docker), from Debian's redis-server package.
#
# Usage:
#   scripts/redis.sh start [single|replica|cluster|all]
#                        install (as root, via apt-get) if needed, start the servers as daemons on
#                        127.0.0.1, print export lines; "single" (the default) is one server,
#                        "replica" a primary with one replica, "cluster" a cluster of three
#                        primaries (redis-cli --cluster create), "all" the three setups
#   scripts/redis.sh stop     stop every server started here and delete the base directory
#   scripts/redis.sh start spare / stop spare
#                        one more server on a port of its own, which a test stops and starts again
#                        in the middle of a run (stop spare stops only it and keeps the rest)
#   scripts/redis.sh env      print the export lines of the servers running
#
#   env_lines="$(scripts/redis.sh start all)" && eval "$env_lines"
#
# Settings (environment):
#   IDEMPOTENCY_REDIS_DIR    base directory for data, pid files and logs (default /tmp/idempotency-redis)
#   IDEMPOTENCY_REDIS_PORT   first port (default 16379): the single server on it, the primary and its
#                            replica on the next two, the cluster's three primaries on the three after
#                            (each cluster node also uses its port + 10000 for the cluster bus)
#
#   (the spare server takes the port after the cluster's: IDEMPOTENCY_REDIS_PORT + 6)
#
# Exports, for each setup that answers: IDEMPOTENCY_REDIS_URI (single), IDEMPOTENCY_REDIS_PRIMARY_URI
# and IDEMPOTENCY_REDIS_REPLICA_URI (replica), IDEMPOTENCY_REDIS_CLUSTER_URIS (cluster,
# comma-separated), IDEMPOTENCY_REDIS_SPARE_URI (spare); and always IDEMPOTENCY_REDIS_DIR and
# IDEMPOTENCY_REDIS_PORT, so that a test can run this script again.
# Data is throwaway: no snapshots, no append-only file.

set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

BASE="${IDEMPOTENCY_REDIS_DIR:-/tmp/idempotency-redis}"
PORT="${IDEMPOTENCY_REDIS_PORT:-16379}"
START_TIMEOUT=30

log() { printf '[redis] %s\n' "$*" >&2; }
die() { printf '[redis] ERROR: %s\n' "$*" >&2; exit 1; }

validate_settings() {
  [[ "$PORT" =~ ^[0-9]+$ ]] || die "IDEMPOTENCY_REDIS_PORT must be a number, got '$PORT'"
  (( PORT + 6 + 10000 <= 65535 )) || die "IDEMPOTENCY_REDIS_PORT is too high for seven ports and their cluster bus ports: $PORT"
  [[ -n "$BASE" && "$BASE" == /* ]] || die "IDEMPOTENCY_REDIS_DIR must be an absolute path, got '$BASE'"
  [[ "$BASE" != *[[:space:]]* ]] || die "IDEMPOTENCY_REDIS_DIR must not contain whitespace, got '$BASE'"
  local canon
  canon="$(realpath -m "$BASE")"
  case "$canon" in
    / | /tmp | /var | /var/tmp | /usr | /usr/* | /etc | /etc/* | /home | /root | /bin | /sbin | /lib | /lib64 | /boot | /dev | /dev/* | /proc | /proc/* | /sys | /sys/*)
      die "refusing to use '$BASE' as IDEMPOTENCY_REDIS_DIR (its contents get deleted by 'stop')" ;;
  esac
}

ensure_installed() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    return 0
  fi
  [[ "$(id -u)" -eq 0 ]] || die "redis-server is not installed and this is not root: install Debian's redis-server, or run as root"
  log "installing redis-server (apt-get)"
  apt-get update -qq >&2
  apt-get install -y -qq redis-server redis-tools >&2
  # The package may start a system-wide server of its own; the tests never use it.
  command -v redis-server >/dev/null 2>&1 || die "apt-get did not install redis-server"
}

# The servers of a setup: "name port" lines.
servers_of() { # setup
  case "$1" in
    single) echo "single $PORT" ;;
    replica) echo "primary $((PORT + 1))"; echo "replica $((PORT + 2))" ;;
    cluster) for i in 0 1 2; do echo "cluster-$i $((PORT + 3 + i))"; done ;;
    spare) echo "spare $((PORT + 6))" ;;
    all) servers_of single; servers_of replica; servers_of cluster ;;
    everything) servers_of all; servers_of spare ;;
    *) die "unknown setup '$1': single, replica, cluster, spare or all" ;;
  esac
}

ping() { # port
  [[ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" == PONG ]]
}

start_server() { # name port [extra redis-server arguments...]
  local name="$1" port="$2"
  shift 2
  local dir="$BASE/$name"
  if ping "$port"; then
    [[ -f "$dir/redis.pid" ]] || die "port $port already answers, but not a server of $BASE: choose another IDEMPOTENCY_REDIS_PORT"
    log "$name already runs on 127.0.0.1:$port"
    return 0
  fi
  mkdir -p "$dir"
  redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --dir "$dir" --pidfile "$dir/redis.pid" \
    --logfile "$dir/redis.log" --save "" --appendonly no --protected-mode no "$@" >&2 \
    || die "redis-server $name did not start on port $port (see $dir/redis.log)"
  local waited=0
  until ping "$port"; do
    (( waited++ < START_TIMEOUT * 10 )) || { tail -n 20 "$dir/redis.log" >&2 || true; die "$name did not answer on port $port"; }
    sleep 0.1
  done
  log "$name runs on 127.0.0.1:$port"
}

start_setup() { # setup
  case "$1" in
    single) start_server single "$PORT" ;;
    replica)
      start_server primary "$((PORT + 1))"
      start_server replica "$((PORT + 2))" --replicaof 127.0.0.1 "$((PORT + 1))"
      local waited=0
      until redis-cli -h 127.0.0.1 -p "$((PORT + 2))" info replication 2>/dev/null | grep -q 'master_link_status:up'; do
        (( waited++ < START_TIMEOUT * 10 )) || die "the replica on port $((PORT + 2)) did not connect to its primary"
        sleep 0.1
      done
      log "replica on $((PORT + 2)) follows the primary on $((PORT + 1))" ;;
    cluster)
      local nodes=() i live=0
      for i in 0 1 2; do ping "$((PORT + 3 + i))" && live=$((live + 1)); done
      if (( live == 0 )); then
        # A cluster's nodes.conf left by servers that are gone names a cluster nobody runs: the
        # nodes would load it and refuse to form a new one ("is not empty"). Start afresh.
        for i in 0 1 2; do rm -f -- "$BASE/cluster-$i/nodes.conf"; done
      fi
      for i in 0 1 2; do
        start_server "cluster-$i" "$((PORT + 3 + i))" --cluster-enabled yes --cluster-config-file "$BASE/cluster-$i/nodes.conf" \
          --cluster-node-timeout 5000
        nodes+=("127.0.0.1:$((PORT + 3 + i))")
      done
      if ! redis-cli -h 127.0.0.1 -p "$((PORT + 3))" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; then
        redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >&2 \
          || die "redis-cli --cluster create failed for ${nodes[*]}"
      fi
      local waited=0
      for i in 0 1 2; do
        until redis-cli -h 127.0.0.1 -p "$((PORT + 3 + i))" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; do
          (( waited++ < START_TIMEOUT * 10 )) || die "the cluster on ports $((PORT + 3))-$((PORT + 5)) is not ok"
          sleep 0.1
        done
      done
      log "cluster of three primaries on ports $((PORT + 3))-$((PORT + 5))" ;;
    spare) start_server spare "$((PORT + 6))" ;;
    all) start_setup single; start_setup replica; start_setup cluster ;;
    *) die "unknown setup '$1': single, replica, cluster, spare or all" ;;
  esac
}

export_lines() {
  printf 'export %s=%q\n' IDEMPOTENCY_REDIS_DIR "$BASE" IDEMPOTENCY_REDIS_PORT "$PORT"
  if ping "$PORT"; then
    printf 'export %s=%q\n' IDEMPOTENCY_REDIS_URI "redis://127.0.0.1:$PORT"
  fi
  if ping "$((PORT + 1))" && ping "$((PORT + 2))"; then
    printf 'export %s=%q\n' IDEMPOTENCY_REDIS_PRIMARY_URI "redis://127.0.0.1:$((PORT + 1))" \
      IDEMPOTENCY_REDIS_REPLICA_URI "redis://127.0.0.1:$((PORT + 2))"
  fi
  if ping "$((PORT + 3))"; then
    printf 'export %s=%q\n' IDEMPOTENCY_REDIS_CLUSTER_URIS \
      "redis://127.0.0.1:$((PORT + 3)),redis://127.0.0.1:$((PORT + 4)),redis://127.0.0.1:$((PORT + 5))"
  fi
  if ping "$((PORT + 6))"; then
    printf 'export %s=%q\n' IDEMPOTENCY_REDIS_SPARE_URI "redis://127.0.0.1:$((PORT + 6))"
  fi
}

stop_servers() { # setup
  local name port pid dir
  while read -r name port; do
    dir="$BASE/$name"
    [[ -f "$dir/redis.pid" ]] || continue
    pid="$(cat "$dir/redis.pid" 2>/dev/null || true)"
    redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
    # A pid file can outlive its server (killed by a test): only a redis-server is waited for and killed.
    if [[ -n "$pid" ]] && grep -q redis "/proc/$pid/comm" 2>/dev/null; then
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      grep -q redis "/proc/$pid/comm" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/redis.pid"
    log "stopped $name (port $port)"
  done < <(servers_of "$1")
}

validate_settings
case "${1:-}" in
  start)
    ensure_installed
    mkdir -p "$BASE"
    start_setup "${2:-single}"
    export_lines ;;
  stop)
    if [[ -n "${2:-}" ]]; then
      stop_servers "$2"
    else
      stop_servers everything
      rm -rf "$BASE"
    fi ;;
  env) export_lines ;;
  *) die "usage: scripts/redis.sh start [single|replica|cluster|spare|all] | stop [setup] | env" ;;
esac
