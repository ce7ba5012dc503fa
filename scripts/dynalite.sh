#!/usr/bin/env bash
# A throwaway dynalite server for the test suite (no Docker): the MIT-licensed implementation of
# DynamoDB's API, from the npm registry, run with the machine's Node.js, its tables in memory.
#
# Usage:
#   scripts/dynalite.sh start    install dynalite (pinned) if needed, start it on 127.0.0.1, wait
#                                until it answers, print export lines
#   scripts/dynalite.sh stop     stop the server started here and delete the base directory
#   scripts/dynalite.sh start spare / stop spare
#                                one more server on the next port, which a test stops and starts
#                                again in the middle of a run (stop spare stops only it)
#   scripts/dynalite.sh status   say whether it runs (exit status 0) or not (3)
#   scripts/dynalite.sh env      print the export lines of the server running
#
#   env_lines="$(scripts/dynalite.sh start)" && eval "$env_lines"
#
# Settings (environment):
#   IDEMPOTENCY_DYNALITE_DIR   base directory for the installation, pid file and log
#                              (default /tmp/idempotency-dynalite)
#   IDEMPOTENCY_DYNALITE_PORT  its port (default 18400); the spare server takes the next one
#
# Exports: IDEMPOTENCY_DYNALITE_ENDPOINT (http://127.0.0.1:PORT), and IDEMPOTENCY_DYNALITE_DIR and
# IDEMPOTENCY_DYNALITE_PORT, so that a test can run this script again. A restart loses every table.

set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

DYNALITE_VERSION=4.0.0
BASE="${IDEMPOTENCY_DYNALITE_DIR:-/tmp/idempotency-dynalite}"
PORT="${IDEMPOTENCY_DYNALITE_PORT:-18400}"
START_TIMEOUT=30

log() { printf '[dynalite] %s\n' "$*" >&2; }
die() { printf '[dynalite] ERROR: %s\n' "$*" >&2; exit 1; }

validate_settings() {
  [[ "$PORT" =~ ^[0-9]+$ ]] && (( PORT > 0 && PORT < 65535 )) || die "IDEMPOTENCY_DYNALITE_PORT must be a port number, got '$PORT'"
  [[ -n "$BASE" && "$BASE" == /* ]] || die "IDEMPOTENCY_DYNALITE_DIR must be an absolute path, got '$BASE'"
  [[ "$BASE" != *[[:space:]]* ]] || die "IDEMPOTENCY_DYNALITE_DIR must not contain whitespace, got '$BASE'"
  local canon
  canon="$(realpath -m "$BASE")"
  case "$canon" in
    / | /tmp | /var | /var/tmp | /usr | /usr/* | /etc | /etc/* | /home | /root | /bin | /sbin | /lib | /lib64 | /boot | /dev | /dev/* | /proc | /proc/* | /sys | /sys/*)
      die "refusing to use '$BASE' as IDEMPOTENCY_DYNALITE_DIR (its contents get deleted by 'stop')" ;;
  esac
}

ensure_tools() {
  if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
    return 0
  fi
  [[ "$(id -u)" -eq 0 ]] || die "Node.js, npm or curl is not installed and this is not root: install Debian's nodejs, npm and curl"
  log "installing nodejs, npm and curl (apt-get)"
  apt-get update -qq >&2
  apt-get install -y -qq nodejs npm curl >&2
  command -v node >/dev/null 2>&1 || die "apt-get did not install node"
}

ensure_installed() {
  local main="$BASE/install/node_modules/dynalite/cli.js"
  if [[ -f "$main" ]] && grep -q "\"version\": \"$DYNALITE_VERSION\"" "$BASE/install/node_modules/dynalite/package.json" 2>/dev/null; then
    return 0
  fi
  log "installing dynalite $DYNALITE_VERSION (npm)"
  mkdir -p "$BASE/install"
  npm install --prefix "$BASE/install" --no-audit --no-fund --no-save --loglevel=error "dynalite@$DYNALITE_VERSION" >&2 \
    || die "npm could not install dynalite@$DYNALITE_VERSION into $BASE/install"
  [[ -f "$main" ]] || die "npm installed dynalite@$DYNALITE_VERSION without its cli.js"
}

# The server a command is about: NAME and SERVER_PORT.
NAME=dynalite
SERVER_PORT="$PORT"
if [[ "${2:-}" == spare ]]; then
  NAME=dynalite-spare
  SERVER_PORT=$((PORT + 1))
fi

# Whether the server answers DynamoDB's API: an unsigned request is refused with dynalite's own error.
answers() {
  curl -s -m 2 -X POST "http://127.0.0.1:$SERVER_PORT/" -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H 'Content-Type: application/x-amz-json-1.0' -d '{}' 2>/dev/null | grep -q '__type'
}

pid_running() {
  local pid
  pid="$(cat "$BASE/$NAME.pid" 2>/dev/null || true)"
  [[ -n "$pid" ]] && grep -q node "/proc/$pid/comm" 2>/dev/null
}

start_server() {
  if answers; then
    pid_running || die "port $SERVER_PORT already answers, but not a server of $BASE: choose another IDEMPOTENCY_DYNALITE_PORT"
    log "dynalite already runs on 127.0.0.1:$SERVER_PORT"
    return 0
  fi
  # dynalite throws on a request whose client went away mid-request (a killed process), which would
  # end the server: the preload drops that one error (the request is lost anyway) and lets every
  # other uncaught error end it as before.
  cat > "$BASE/drop-aborted.js" <<'JS'
process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') return;
  console.error(err);
  process.exit(1);
});
JS
  setsid node --require "$BASE/drop-aborted.js" "$BASE/install/node_modules/dynalite/cli.js" --host 127.0.0.1 --port "$SERVER_PORT" --createTableMs 0 --deleteTableMs 0 \
    --updateTableMs 0 >"$BASE/$NAME.log" 2>&1 < /dev/null &
  echo $! > "$BASE/$NAME.pid"
  local waited=0
  until answers; do
    pid_running || { tail -n 20 "$BASE/$NAME.log" >&2 || true; die "dynalite exited before answering on port $SERVER_PORT"; }
    (( waited++ < START_TIMEOUT * 10 )) || { tail -n 20 "$BASE/$NAME.log" >&2 || true; die "dynalite did not answer on port $SERVER_PORT"; }
    sleep 0.1
  done
  log "$NAME $DYNALITE_VERSION runs on 127.0.0.1:$SERVER_PORT"
}

stop_server() {
  if pid_running; then
    local pid
    pid="$(cat "$BASE/$NAME.pid")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    log "stopped $NAME (port $SERVER_PORT)"
  fi
  rm -f "$BASE/$NAME.pid"
}

export_lines() {
  printf 'export %s=%q\n' IDEMPOTENCY_DYNALITE_DIR "$BASE" IDEMPOTENCY_DYNALITE_PORT "$PORT"
  if SERVER_PORT="$PORT" answers; then
    printf 'export %s=%q\n' IDEMPOTENCY_DYNALITE_ENDPOINT "http://127.0.0.1:$PORT"
  fi
}

validate_settings
case "${1:-}" in
  start)
    mkdir -p "$BASE"
    ensure_tools
    ensure_installed
    start_server
    export_lines ;;
  stop)
    stop_server
    if [[ "${2:-}" != spare ]]; then
      NAME=dynalite-spare SERVER_PORT=$((PORT + 1)) stop_server
      rm -rf "$BASE"
    fi ;;
  status)
    if answers; then echo "dynalite answers on 127.0.0.1:$SERVER_PORT"; else echo "dynalite does not answer on 127.0.0.1:$SERVER_PORT"; exit 3; fi ;;
  env) export_lines ;;
  *) die "usage: scripts/dynalite.sh start [spare] | stop [spare] | status [spare] | env" ;;
esac
