#!/usr/bin/env bash
# Throwaway PostgreSQL and MariaDB servers for the test suite (no Docker).
#
# Usage:
#   scripts/db-servers.sh start    install (as root, via apt-get) if needed, start both
#                                  servers, create user/database "idem", print export lines
#   scripts/db-servers.sh stop     stop both servers and delete their data directories
#   scripts/db-servers.sh status   show what is running (exit 0 only if both run)
#   scripts/db-servers.sh env      print the export lines only
#
#   eval "$(scripts/db-servers.sh start)"   # progress goes to stderr, exports to stdout
#   (Note: `eval "$(...)"` hides a failing start; to catch it, capture first:
#    env_lines="$(scripts/db-servers.sh start)" && eval "$env_lines")
#
# Settings (environment):
#   IDEMPOTENCY_DB_DIR         base directory for data, sockets and logs (default /tmp/idempotency-db)
#   IDEMPOTENCY_PG_PORT        PostgreSQL TCP port on 127.0.0.1        (default 15432)
#   IDEMPOTENCY_MARIADB_PORT   MariaDB TCP port on 127.0.0.1           (default 13306)
#   IDEMPOTENCY_DB_DURABLE     1 keeps each server's default durability (fsync at commit), for
#                              benchmarks that should pay for a real commit (default: off)
#
# The default ports lie below Linux's range of ephemeral client ports (32768-60999), so that no
# client connection of the machine can be holding them when a server starts.
# Both servers listen on 127.0.0.1 only; user "idem", password "idem", database "idem".
# Data is throwaway: fsync is off on both servers unless IDEMPOTENCY_DB_DURABLE=1. Meant to be run as root (it installs
# packages and runs PostgreSQL as the "postgres" user); a non-root user who already has
# the server binaries can run it too, or can point the tests at their own servers instead.

set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

BASE="${IDEMPOTENCY_DB_DIR:-/tmp/idempotency-db}"
PG_PORT="${IDEMPOTENCY_PG_PORT:-15432}"
MARIADB_PORT="${IDEMPOTENCY_MARIADB_PORT:-13306}"
DURABLE="${IDEMPOTENCY_DB_DURABLE:-0}"
DB_NAME=idem
DB_USER=idem
DB_PASSWORD=idem

PG_DIR="$BASE/postgresql"          # owned by postgres: data/, socket
PG_DATA="$PG_DIR/data"
PG_LOG="$BASE/postgresql.log"
MARIADB_DIR="$BASE/mariadb"        # data/, socket, pid file
MARIADB_DATA="$MARIADB_DIR/data"
MARIADB_SOCKET="$MARIADB_DIR/mysqld.sock"
MARIADB_PIDFILE="$MARIADB_DIR/mysqld.pid"
MARIADB_LOG="$BASE/mariadb.log"

START_TIMEOUT=30                   # seconds to wait for a server to accept connections

LOG_TAG="${LOG_TAG:-db-servers}"  # scripts/db-cluster.sh sources this file for its helpers
log() { printf '[%s] %s\n' "$LOG_TAG" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$LOG_TAG" "$*" >&2; exit 1; }

is_root() { [[ "$(id -u)" -eq 0 ]]; }

own_servers_hint() {
  cat >&2 <<'EOF'
[db-servers] Alternatively, run the tests against servers of your own by exporting
[db-servers] (scripts/test then starts nothing):
[db-servers]   IDEMPOTENCY_PG_URL=jdbc:postgresql://HOST:PORT/DB
[db-servers]   IDEMPOTENCY_PG_USER=...  IDEMPOTENCY_PG_PASSWORD=...
[db-servers]   IDEMPOTENCY_MARIADB_URL=jdbc:mariadb://HOST:PORT/DB
[db-servers]   IDEMPOTENCY_MARIADB_USER=...  IDEMPOTENCY_MARIADB_PASSWORD=...
EOF
}

validate_settings() {
  [[ "$PG_PORT" =~ ^[0-9]+$ ]] || die "IDEMPOTENCY_PG_PORT must be a number, got '$PG_PORT'"
  [[ "$MARIADB_PORT" =~ ^[0-9]+$ ]] || die "IDEMPOTENCY_MARIADB_PORT must be a number, got '$MARIADB_PORT'"
  [[ "$PG_PORT" != "$MARIADB_PORT" ]] || die "PostgreSQL and MariaDB ports must differ (both $PG_PORT)"
  [[ -n "$BASE" && "$BASE" == /* ]] || die "IDEMPOTENCY_DB_DIR must be an absolute path, got '$BASE'"
  [[ "$BASE" != *[[:space:]]* ]] || die "IDEMPOTENCY_DB_DIR must not contain whitespace, got '$BASE'"
  local canon
  canon="$(realpath -m "$BASE")"
  case "$canon" in
    / | /tmp | /var | /var/tmp | /usr | /usr/* | /etc | /etc/* | /home | /root | /bin | /sbin | /lib | /lib64 | /boot | /dev | /dev/* | /proc | /proc/* | /sys | /sys/*)
      die "refusing to use '$BASE' as IDEMPOTENCY_DB_DIR (its contents get deleted by 'stop')" ;;
  esac
}

export_lines() {
  printf 'export %s=%q\n' \
    IDEMPOTENCY_PG_URL "jdbc:postgresql://127.0.0.1:$PG_PORT/$DB_NAME" \
    IDEMPOTENCY_PG_USER "$DB_USER" \
    IDEMPOTENCY_PG_PASSWORD "$DB_PASSWORD" \
    IDEMPOTENCY_MARIADB_URL "jdbc:mariadb://127.0.0.1:$MARIADB_PORT/$DB_NAME" \
    IDEMPOTENCY_MARIADB_USER "$DB_USER" \
    IDEMPOTENCY_MARIADB_PASSWORD "$DB_PASSWORD"
}

show_log_tail() { # file
  if [[ -s "$1" ]]; then
    log "last lines of $1:"
    tail -n 25 "$1" | sed 's/^/    /' >&2
  fi
}

# ---------------------------------------------------------------- binaries

PG_BIN=""
find_pg_bin() {
  PG_BIN=""
  # Prefer Debian's versioned directories, highest version first.
  local d
  while IFS= read -r d; do
    if [[ -x "$d/initdb" && -x "$d/pg_ctl" && -x "$d/postgres" ]]; then
      PG_BIN="$d"
      return 0
    fi
  done < <(shopt -s nullglob; printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r)
  # Otherwise whatever is on PATH (e.g. /usr/local/bin or a source build).
  local initdb
  if initdb="$(command -v initdb 2>/dev/null)"; then
    d="$(dirname "$(readlink -f "$initdb")")"
    if [[ -x "$d/pg_ctl" && -x "$d/postgres" ]]; then
      PG_BIN="$d"
      return 0
    fi
  fi
  return 1
}

PSQL=""
find_psql() {
  if [[ -x "$PG_BIN/psql" ]]; then
    PSQL="$PG_BIN/psql"
  elif PSQL="$(command -v psql 2>/dev/null)"; then
    :
  else
    return 1
  fi
}

first_cmd() { # name... : prints the first one found on PATH
  local c
  for c in "$@"; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

MARIADBD="" MARIADB_INSTALL_DB="" MARIADB_ADMIN="" MARIADB_CLIENT=""
find_mariadb_bins() {
  MARIADBD="$(first_cmd mariadbd mysqld)" || return 1
  MARIADB_INSTALL_DB="$(first_cmd mariadb-install-db mysql_install_db)" || return 1
  MARIADB_ADMIN="$(first_cmd mariadb-admin mysqladmin)" || return 1
  MARIADB_CLIENT="$(first_cmd mariadb mysql)" || return 1
}

APT_UPDATED=0
apt_install() { # package...
  if ! is_root; then
    log "missing server binaries for: $*; installing them needs root ('apt-get install -y $*')."
    own_servers_hint
    exit 1
  fi
  command -v apt-get >/dev/null 2>&1 ||
    { log "apt-get not found; install $* with your package manager."; own_servers_hint; exit 1; }
  local apt_log
  apt_log="$(mktemp)"
  if [[ "$APT_UPDATED" -eq 0 ]]; then
    log "apt-get update"
    if ! apt-get update >"$apt_log" 2>&1; then
      show_log_tail "$apt_log"; rm -f -- "$apt_log"; die "apt-get update failed"
    fi
    APT_UPDATED=1
  fi
  log "apt-get install -y $*"
  if ! apt-get install -y --no-install-recommends "$@" </dev/null >"$apt_log" 2>&1; then
    show_log_tail "$apt_log"; rm -f -- "$apt_log"; die "apt-get install $* failed"
  fi
  rm -f -- "$apt_log"
}

ensure_binaries() {
  if ! find_pg_bin; then
    apt_install postgresql
    find_pg_bin || die "PostgreSQL server binaries (initdb, pg_ctl, postgres) still not found after installing"
  fi
  if ! find_psql; then
    apt_install postgresql-client
    find_psql || die "psql not found after installing postgresql-client"
  fi
  if ! find_mariadb_bins; then
    apt_install mariadb-server mariadb-client
    find_mariadb_bins || die "MariaDB binaries (mariadbd, mariadb-install-db, mariadb-admin, mariadb) still not found after installing"
  fi
  log "PostgreSQL binaries: $PG_BIN ($("$PG_BIN/postgres" --version))"
  log "MariaDB server: $MARIADBD ($("$MARIADBD" --version 2>/dev/null | head -n 1))"
}

# ---------------------------------------------------------------- PostgreSQL

PG_OS_USER=""
# Runs a PostgreSQL program as the PostgreSQL OS user ("postgres" when we are root).
as_pg() {
  if is_root; then
    (cd / && runuser -u "$PG_OS_USER" -- "$@")
  else
    (cd / && "$@")
  fi
}

pg_running() {
  [[ -f "$PG_DATA/PG_VERSION" ]] || return 1
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1
}

pg_psql() { # psql against the local socket as the bootstrap superuser, SQL on stdin
  as_pg "$PSQL" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR" -p "$PG_PORT" -U postgres -d postgres
}

start_postgresql() {
  if is_root; then
    PG_OS_USER=postgres
    id -u postgres >/dev/null 2>&1 || die "user 'postgres' does not exist (is the postgresql package installed?)"
  else
    PG_OS_USER="$(id -un)"
  fi

  if pg_running; then
    log "PostgreSQL already running in $PG_DATA"
  else
    local bin_major data_major=""
    bin_major="$("$PG_BIN/postgres" --version | sed -E 's/.* ([0-9]+)(\.[0-9]+)*.*/\1/')"
    [[ -f "$PG_DATA/PG_VERSION" ]] && data_major="$(cat "$PG_DATA/PG_VERSION")"
    if [[ -n "$data_major" && "$data_major" != "$bin_major" ]]; then
      log "discarding $PG_DATA (made by PostgreSQL $data_major, binaries are $bin_major)"
      rm -rf -- "$PG_DIR"
    elif [[ -z "$data_major" && -e "$PG_DIR" ]]; then
      rm -rf -- "$PG_DIR"   # half-initialised leftover
    fi

    mkdir -p -- "$PG_DIR"
    if is_root; then chown "$PG_OS_USER": "$PG_DIR"; fi
    chmod 0700 "$PG_DIR"
    if ! as_pg test -w "$PG_DIR"; then
      die "user '$PG_OS_USER' cannot reach $PG_DIR; choose an IDEMPOTENCY_DB_DIR whose parent directories it can traverse (e.g. under /tmp)"
    fi

    if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
      log "initdb $PG_DATA"
      : >"$PG_LOG"
      if is_root; then chown "$PG_OS_USER": "$PG_LOG"; fi
      # The superuser has no password: it can only connect over the socket in $PG_DIR (mode 0700).
      if ! as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres \
          --auth-local=trust --auth-host=scram-sha-256 \
          -E UTF8 --locale=C --no-sync >>"$PG_LOG" 2>&1; then
        show_log_tail "$PG_LOG"
        die "initdb failed"
      fi
    fi

    touch "$PG_LOG"
    if is_root; then chown "$PG_OS_USER": "$PG_LOG"; fi
    log "starting PostgreSQL on 127.0.0.1:$PG_PORT (log: $PG_LOG)"
    local opts="-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$PG_DIR"
    opts+=" -c max_connections=200 -c password_encryption=scram-sha-256"
    if [[ "$DURABLE" != 1 ]]; then
      opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    fi
    if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -o "$opts" -w -t "$START_TIMEOUT" start >&2; then
      show_log_tail "$PG_LOG"
      die "PostgreSQL did not start on port $PG_PORT (port already in use? see the log above)"
    fi
  fi

  pg_psql <<SQL >&2 || die "could not create PostgreSQL role/database '$DB_USER'/'$DB_NAME'"
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
    CREATE ROLE $DB_USER LOGIN CREATEDB PASSWORD '$DB_PASSWORD';
  ELSE
    ALTER ROLE $DB_USER LOGIN CREATEDB PASSWORD '$DB_PASSWORD';
  END IF;
END
\$\$;
SELECT 'CREATE DATABASE $DB_NAME OWNER $DB_USER'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DB_NAME')
\gexec
SQL
  log "PostgreSQL ready: jdbc:postgresql://127.0.0.1:$PG_PORT/$DB_NAME"
}

stop_postgresql() {
  if [[ -f "$PG_DATA/PG_VERSION" ]] && find_pg_bin; then
    if is_root; then PG_OS_USER=postgres; else PG_OS_USER="$(id -un)"; fi
    if pg_running; then
      log "stopping PostgreSQL"
      as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >&2 ||
        die "pg_ctl stop failed; data left in $PG_DATA"
    fi
  elif [[ -f "$PG_DATA/postmaster.pid" ]]; then
    local pid
    pid="$(head -n 1 "$PG_DATA/postmaster.pid")"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      log "stopping PostgreSQL (pid $pid)"
      kill -INT "$pid" 2>/dev/null || true
      wait_for_exit "$pid" 30 || die "PostgreSQL (pid $pid) did not stop"
    fi
  fi
  if [[ -e "$PG_DIR" ]]; then
    rm -rf -- "$PG_DIR"
    log "removed $PG_DIR"
  fi
}

pg_status() {
  if find_pg_bin; then
    if is_root; then PG_OS_USER=postgres; else PG_OS_USER="$(id -un)"; fi
    if pg_running; then
      echo "postgresql: running on 127.0.0.1:$PG_PORT, pid $(head -n 1 "$PG_DATA/postmaster.pid"), data $PG_DATA ($("$PG_BIN/postgres" --version))"
      return 0
    fi
  fi
  echo "postgresql: not running (data dir $PG_DATA)"
  return 1
}

# ---------------------------------------------------------------- MariaDB

wait_for_exit() { # pid seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

mariadb_admin_user() { if is_root; then echo root; else id -un; fi; }

mariadb_pid() {
  local pid
  [[ -f "$MARIADB_PIDFILE" ]] || return 1
  pid="$(head -n 1 "$MARIADB_PIDFILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

mariadb_ping() {
  [[ -S "$MARIADB_SOCKET" ]] || return 1
  "$MARIADB_ADMIN" --no-defaults --socket="$MARIADB_SOCKET" -u"$(mariadb_admin_user)" \
    --connect-timeout=2 ping >/dev/null 2>&1
}

mariadb_sql() { # SQL on stdin, as the admin (unix_socket authentication)
  "$MARIADB_CLIENT" --no-defaults --socket="$MARIADB_SOCKET" -u"$(mariadb_admin_user)" --batch
}

start_mariadb() {
  local admin
  admin="$(mariadb_admin_user)"
  if mariadb_pid >/dev/null && mariadb_ping; then
    log "MariaDB already running in $MARIADB_DATA"
  else
    if [[ -n "$(mariadb_pid || true)" ]]; then
      die "a MariaDB process (pid $(mariadb_pid)) owns $MARIADB_DATA but does not answer; run '$0 stop' first"
    fi
    if [[ ! -d "$MARIADB_DATA/mysql" ]]; then
      rm -rf -- "$MARIADB_DIR"
      mkdir -p -- "$MARIADB_DATA"
      : >"$MARIADB_LOG"
      log "mariadb-install-db $MARIADB_DATA"
      if ! "$MARIADB_INSTALL_DB" --no-defaults --user="$admin" --datadir="$MARIADB_DATA" \
          --auth-root-authentication-method=socket --skip-test-db \
          >>"$MARIADB_LOG" 2>&1 </dev/null; then
        show_log_tail "$MARIADB_LOG"
        die "mariadb-install-db failed"
      fi
    fi
    rm -f -- "$MARIADB_SOCKET" "$MARIADB_PIDFILE"

    local args=(--datadir="$MARIADB_DATA" --bind-address=127.0.0.1 --port="$MARIADB_PORT"
      --socket="$MARIADB_SOCKET" --pid-file="$MARIADB_PIDFILE"
      --max-connections=300 --skip-name-resolve --skip-log-bin
      --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci)
    if [[ "$DURABLE" != 1 ]]; then
      args+=(--innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --sync-frm=0)
    fi
    if is_root; then args=(--user=root "${args[@]}"); fi
    log "starting MariaDB on 127.0.0.1:$MARIADB_PORT (log: $MARIADB_LOG)"
    # stdin/stdout/stderr must not stay attached to the caller: `$(db-servers.sh start)` waits
    # for every writer of its pipe to exit.
    nohup "$MARIADBD" --no-defaults "${args[@]}" </dev/null >>"$MARIADB_LOG" 2>&1 &
    local pid=$! i
    for ((i = 0; i < START_TIMEOUT * 5; i++)); do
      if mariadb_ping; then break; fi
      if ! kill -0 "$pid" 2>/dev/null; then
        show_log_tail "$MARIADB_LOG"
        die "MariaDB exited during startup (port $MARIADB_PORT already in use?)"
      fi
      sleep 0.2
    done
    if ! mariadb_ping; then
      show_log_tail "$MARIADB_LOG"
      kill "$pid" 2>/dev/null || true
      die "MariaDB did not accept connections within ${START_TIMEOUT}s"
    fi
  fi

  mariadb_sql <<SQL >&2 || die "could not create MariaDB user/database '$DB_USER'/'$DB_NAME'"
CREATE DATABASE IF NOT EXISTS \`$DB_NAME\` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
ALTER USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
ALTER USER '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL PRIVILEGES ON \`$DB_NAME\`.* TO '$DB_USER'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`$DB_NAME\`.* TO '$DB_USER'@'localhost';
FLUSH PRIVILEGES;
SQL
  log "MariaDB ready: jdbc:mariadb://127.0.0.1:$MARIADB_PORT/$DB_NAME"
}

stop_mariadb() {
  local pid
  if pid="$(mariadb_pid)"; then
    log "stopping MariaDB (pid $pid)"
    if find_mariadb_bins && mariadb_ping; then
      "$MARIADB_ADMIN" --no-defaults --socket="$MARIADB_SOCKET" -u"$(mariadb_admin_user)" shutdown >&2 ||
        kill -TERM "$pid" 2>/dev/null || true
    else
      kill -TERM "$pid" 2>/dev/null || true
    fi
    if ! wait_for_exit "$pid" 30; then
      log "MariaDB did not stop within 30s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      wait_for_exit "$pid" 5 || die "could not stop MariaDB (pid $pid)"
    fi
  fi
  if [[ -e "$MARIADB_DIR" ]]; then
    rm -rf -- "$MARIADB_DIR"
    log "removed $MARIADB_DIR"
  fi
}

mariadb_status() {
  local pid
  if pid="$(mariadb_pid)" && find_mariadb_bins && mariadb_ping; then
    echo "mariadb:    running on 127.0.0.1:$MARIADB_PORT, pid $pid, data $MARIADB_DATA ($("$MARIADBD" --version 2>/dev/null | head -n 1))"
    return 0
  fi
  echo "mariadb:    not running (data dir $MARIADB_DATA)"
  return 1
}

# ---------------------------------------------------------------- commands

cmd_start() {
  ensure_binaries
  mkdir -p -- "$BASE"
  chmod 0755 "$BASE"
  start_postgresql
  start_mariadb
  log "both servers are up"
  export_lines
}

cmd_stop() {
  stop_postgresql
  stop_mariadb
  log "stopped (server logs kept: $PG_LOG, $MARIADB_LOG)"
}

cmd_status() {
  local rc=0
  pg_status || rc=1
  mariadb_status || rc=1
  return "$rc"
}

usage() {
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

main() {
  [[ $# -eq 1 ]] || usage
  case "$1" in
    env) export_lines; return 0 ;;
    -h | --help | help) usage ;;
  esac
  validate_settings
  case "$1" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    *) usage ;;
  esac
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
