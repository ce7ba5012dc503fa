#!/usr/bin/env bash
# Throwaway replicated databases for the scale-out tests (no Docker), on 127.0.0.1:
# a three-node MariaDB Galera cluster, and a PostgreSQL primary with a hot standby.
#
# Usage:
#   scripts/db-cluster.sh start           install (as root, via apt-get) if needed, start the Galera
#                                         cluster and the PostgreSQL pair, print export lines
#   scripts/db-cluster.sh stop            stop everything and delete the data directories
#   scripts/db-cluster.sh status          show what is running (exit 0 only if all of it runs)
#   scripts/db-cluster.sh env             print the export lines only
#
#   eval "$(scripts/db-cluster.sh start)"   # progress goes to stderr, exports to stdout
#   (capture first to catch a failing start: env_lines="$(scripts/db-cluster.sh start)" && eval "$env_lines")
#
# Faults, used by the tests (each prints nothing on stdout and exits non-zero on failure):
#   scripts/db-cluster.sh galera-kill N     SIGKILL Galera node N (1, 2 or 3)
#   scripts/db-cluster.sh galera-rejoin N   recover node N's position (--wsrep-recover) and start it
#                                           again from there (incremental state transfer); wait until Synced
#   scripts/db-cluster.sh pg-kill-primary   SIGKILL the PostgreSQL primary (its postmaster)
#   scripts/db-cluster.sh pg-promote        promote the standby (it then accepts writes)
#   scripts/db-cluster.sh pg-rebuild MODE   discard both PostgreSQL servers and start a new pair, the
#                                           standby synchronous (MODE sync) or asynchronous (MODE async)
#
# Settings (environment):
#   IDEMPOTENCY_CLUSTER_DIR     base directory for data, sockets and logs (default /tmp/idempotency-cluster)
#   IDEMPOTENCY_GALERA_PORT     first of the Galera nodes' ports (default 23306): node N serves SQL on
#                               PORT+N-1, group communication on PORT+3+N-1, incremental state transfer
#                               on PORT+6+N-1 and full state transfer (rsync) on PORT+9+N-1
#   IDEMPOTENCY_PG_PRIMARY_PORT the PostgreSQL primary's port (default 25432)
#   IDEMPOTENCY_PG_STANDBY_PORT the PostgreSQL standby's port (default 25433)
#   The defaults lie below Linux's ephemeral range (32768-60999), where a client's connection
#   could hold one of the many ports a cluster needs.
#   IDEMPOTENCY_PG_REPLICATION  sync (default) or async: how "start" sets up the standby
#
# User "idem", password "idem", database "idem" everywhere. Data is throwaway: the servers keep no
# fsync (a SIGKILLed process loses nothing the operating system received; a power cut would), but
# PostgreSQL's commits do wait for the synchronous standby (synchronous_commit=on). Meant to be run
# as root, as scripts/db-servers.sh, whose helpers this script uses.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_TAG=db-cluster
# shellcheck source=db-servers.sh
source "$ROOT/scripts/db-servers.sh"

BASE="${IDEMPOTENCY_CLUSTER_DIR:-/tmp/idempotency-cluster}"
GALERA_PORT="${IDEMPOTENCY_GALERA_PORT:-23306}"
PG_PRIMARY_PORT="${IDEMPOTENCY_PG_PRIMARY_PORT:-25432}"
PG_STANDBY_PORT="${IDEMPOTENCY_PG_STANDBY_PORT:-25433}"
PG_REPLICATION="${IDEMPOTENCY_PG_REPLICATION:-sync}"
GALERA_PROVIDER=/usr/lib/galera/libgalera_smm.so
GALERA_NODES=3
SYNC_TIMEOUT=60                    # seconds for a Galera node to reach Synced
# How long the surviving nodes wait before they evict a silent node (Galera's default is 5 s).
GALERA_SUSPECT_TIMEOUT=PT5S

PG_BASE="$BASE/postgresql"         # primary/ and standby/, owned by postgres
PG_CLUSTER_LOG="$BASE/postgresql"  # .primary.log, .standby.log

# ---------------------------------------------------------------- settings

validate_cluster_settings() {
  local p
  for p in "$GALERA_PORT" "$PG_PRIMARY_PORT" "$PG_STANDBY_PORT"; do
    [[ "$p" =~ ^[0-9]+$ && "$p" -ge 1024 && "$p" -le 65500 ]] ||
      die "ports must be numbers between 1024 and 65500, got '$p'"
  done
  [[ "$PG_PRIMARY_PORT" != "$PG_STANDBY_PORT" ]] || die "the PostgreSQL primary and standby ports must differ"
  for p in "$PG_PRIMARY_PORT" "$PG_STANDBY_PORT"; do
    if ((p >= GALERA_PORT && p < GALERA_PORT + 12)); then
      die "PostgreSQL port $p falls in the Galera ports $GALERA_PORT..$((GALERA_PORT + 11))"
    fi
  done
  [[ "$PG_REPLICATION" == sync || "$PG_REPLICATION" == async ]] ||
    die "IDEMPOTENCY_PG_REPLICATION must be sync or async, got '$PG_REPLICATION'"
  # The checks of scripts/db-servers.sh on the directory (absolute, no whitespace, not a system one).
  PG_PORT=1 MARIADB_PORT=2 validate_settings
}

cluster_export_lines() {
  local urls="" n
  for ((n = 1; n <= GALERA_NODES; n++)); do
    urls+="${urls:+,}jdbc:mariadb://127.0.0.1:$(galera_sql_port "$n")/$DB_NAME"
  done
  printf 'export %s=%q\n' \
    IDEMPOTENCY_CLUSTER_DIR "$BASE" \
    IDEMPOTENCY_CLUSTER_CONTROL "$ROOT/scripts/db-cluster.sh" \
    IDEMPOTENCY_GALERA_PORT "$GALERA_PORT" \
    IDEMPOTENCY_GALERA_URLS "$urls" \
    IDEMPOTENCY_GALERA_USER "$DB_USER" \
    IDEMPOTENCY_GALERA_PASSWORD "$DB_PASSWORD" \
    IDEMPOTENCY_PG_PRIMARY_PORT "$PG_PRIMARY_PORT" \
    IDEMPOTENCY_PG_STANDBY_PORT "$PG_STANDBY_PORT" \
    IDEMPOTENCY_PG_FAILOVER_URL "jdbc:postgresql://127.0.0.1:$PG_PRIMARY_PORT,127.0.0.1:$PG_STANDBY_PORT/$DB_NAME?targetServerType=primary" \
    IDEMPOTENCY_PG_FAILOVER_USER "$DB_USER" \
    IDEMPOTENCY_PG_FAILOVER_PASSWORD "$DB_PASSWORD"
}

# ---------------------------------------------------------------- Galera

galera_sql_port() { echo $((GALERA_PORT + $1 - 1)); }
galera_dir() { echo "$BASE/galera$1"; }
galera_socket() { echo "$(galera_dir "$1")/mysqld.sock"; }
galera_pidfile() { echo "$(galera_dir "$1")/mysqld.pid"; }
galera_log() { echo "$BASE/galera$1.log"; }

galera_os_user() { # root runs the nodes as "mysql": rsync's state transfer daemon would drop root to "nobody"
  if is_root && id -u mysql >/dev/null 2>&1; then echo mysql; else id -un; fi
}

galera_pid() { # node
  local f pid
  f="$(galera_pidfile "$1")"
  [[ -f "$f" ]] || return 1
  pid="$(head -n 1 "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

galera_sql() { # node, SQL on stdin, as the admin (unix_socket authentication)
  "$MARIADB_CLIENT" --no-defaults --socket="$(galera_socket "$1")" -u"$(mariadb_admin_user)" --batch --skip-column-names \
    --connect-timeout=2
}

galera_state() { # node: prints wsrep_local_state_comment (Synced, Joining, Donor/Desynced, ...)
  echo "SHOW STATUS LIKE 'wsrep_local_state_comment'" | galera_sql "$1" 2>/dev/null | awk '{print $2}'
}

galera_args() { # node
  local n=$1 dir addresses="" i
  dir="$(galera_dir "$n")"
  for ((i = 0; i < GALERA_NODES; i++)); do
    addresses+="${addresses:+,}127.0.0.1:$((GALERA_PORT + 3 + i))"
  done
  GALERA_ARGS=(--no-defaults --user="$(galera_os_user)" --datadir="$dir/data" --bind-address=127.0.0.1
    --port="$(galera_sql_port "$n")" --socket="$(galera_socket "$n")" --pid-file="$(galera_pidfile "$n")"
    --max-connections=200 --skip-name-resolve --skip-log-bin
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci
    --innodb-buffer-pool-size=64M --innodb-log-file-size=16M
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --sync-frm=0
    --binlog-format=ROW --innodb-autoinc-lock-mode=2 --default-storage-engine=InnoDB
    --wsrep-on=ON --wsrep-provider="$GALERA_PROVIDER" --wsrep-cluster-name=idempotency
    --wsrep-cluster-address="gcomm://$addresses" --wsrep-node-name="node$n"
    --wsrep-node-address="127.0.0.1" --wsrep-node-incoming-address="127.0.0.1:$(galera_sql_port "$n")"
    --wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$((GALERA_PORT + 9 + n - 1))"
    --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$((GALERA_PORT + 3 + n - 1));ist.recv_addr=127.0.0.1:$((GALERA_PORT + 6 + n - 1));gcache.size=64M;evs.suspect_timeout=$GALERA_SUSPECT_TIMEOUT;evs.inactive_timeout=PT7S")
}

# A port that a socket uses (a listener, or a client's end of a connection: this range may be the
# system's ephemeral one) cannot be bound; say which instead of a node failing in its state transfer.
check_ports_free() { # port...
  command -v ss >/dev/null 2>&1 || return 0
  local p
  for p in "$@"; do
    if ss -Htan "( sport = :$p )" 2>/dev/null | grep -qv '^TIME-WAIT'; then
      die "port $p is in use (ss -tanp 'sport = :$p'); choose other ports (IDEMPOTENCY_GALERA_PORT, IDEMPOTENCY_PG_*_PORT)"
    fi
  done
}

# Starts node N's server with extra arguments and waits until it is Synced.
galera_launch() { # node extra-args...
  local n=$1 pid i state=""
  shift
  check_ports_free "$(galera_sql_port "$n")" $((GALERA_PORT + 3 + n - 1)) $((GALERA_PORT + 6 + n - 1)) $((GALERA_PORT + 9 + n - 1))
  galera_args "$n"
  rm -f -- "$(galera_socket "$n")" "$(galera_pidfile "$n")"
  touch "$(galera_log "$n")"
  log "starting Galera node $n on 127.0.0.1:$(galera_sql_port "$n") $* (log: $(galera_log "$n"))"
  nohup "$MARIADBD" "${GALERA_ARGS[@]}" "$@" </dev/null >>"$(galera_log "$n")" 2>&1 &
  pid=$!
  for ((i = 0; i < SYNC_TIMEOUT * 5; i++)); do
    state="$(galera_state "$n" || true)"
    [[ "$state" == Synced ]] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      show_log_tail "$(galera_log "$n")"
      die "Galera node $n exited during startup (port $(galera_sql_port "$n") or $((GALERA_PORT + 3 + n - 1)) in use?)"
    fi
    sleep 0.2
  done
  if [[ "$state" != Synced ]]; then
    show_log_tail "$(galera_log "$n")"
    die "Galera node $n did not reach Synced within ${SYNC_TIMEOUT}s (state: '${state:-no answer}')"
  fi
  log "Galera node $n synced"
}

galera_start_node() { # node
  local n=$1 dir user
  dir="$(galera_dir "$n")"
  user="$(galera_os_user)"
  if galera_pid "$n" >/dev/null && [[ "$(galera_state "$n" || true)" == Synced ]]; then
    log "Galera node $n already running"
    return 0
  fi
  [[ -z "$(galera_pid "$n" || true)" ]] || die "Galera node $n (pid $(galera_pid "$n")) runs but is not Synced; run '$0 stop' first"
  rm -rf -- "$dir"
  mkdir -p -- "$dir/data"
  chown -R "$user": "$dir"
  : >"$(galera_log "$n")"
  if [[ "$n" -eq 1 ]]; then
    log "mariadb-install-db $dir/data"
    if ! "$MARIADB_INSTALL_DB" --no-defaults --user="$user" --datadir="$dir/data" \
        --auth-root-authentication-method=socket --skip-test-db >>"$(galera_log "$n")" 2>&1 </dev/null; then
      show_log_tail "$(galera_log "$n")"
      die "mariadb-install-db failed"
    fi
    galera_launch "$n" --wsrep-new-cluster
    galera_sql "$n" <<SQL >&2 || die "could not create the Galera user/database '$DB_USER'/'$DB_NAME'"
CREATE DATABASE IF NOT EXISTS \`$DB_NAME\` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL PRIVILEGES ON \`$DB_NAME\`.* TO '$DB_USER'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`$DB_NAME\`.* TO '$DB_USER'@'localhost';
SQL
  else
    galera_launch "$n" # an empty data directory: the node joins by a full state transfer
  fi
}

galera_stop_node() { # node
  local n=$1 pid
  if pid="$(galera_pid "$n")"; then
    log "stopping Galera node $n (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for_exit "$pid" 30; then
      kill -KILL "$pid" 2>/dev/null || true
      wait_for_exit "$pid" 5 || die "could not stop Galera node $n (pid $pid)"
    fi
  fi
  rm -rf -- "$(galera_dir "$n")"
}

galera_node_arg() { # value: checks a node number
  [[ "${1:-}" =~ ^[1-3]$ ]] || die "a Galera node is 1, 2 or 3, got '${1:-}'"
}

cmd_galera_kill() {
  local n=$1 pid
  galera_node_arg "$n"
  pid="$(galera_pid "$n")" || die "Galera node $n is not running"
  log "SIGKILL Galera node $n (pid $pid)"
  kill -KILL "$pid"
  wait_for_exit "$pid" 10 || die "Galera node $n (pid $pid) survived SIGKILL"
}

cmd_galera_rejoin() {
  local n=$1 recovered position
  galera_node_arg "$n"
  find_mariadb_bins || die "MariaDB binaries not found"
  ! galera_pid "$n" >/dev/null || die "Galera node $n is still running"
  galera_args "$n"
  recovered="$(mktemp)"
  "$MARIADBD" "${GALERA_ARGS[@]}" --wsrep-recover </dev/null >/dev/null 2>"$recovered" || true
  position="$(sed -n 's/.*WSREP: Recovered position: *\([0-9a-f-]*:[-0-9]*\).*/\1/p' "$recovered" | tail -n 1)"
  if [[ -z "$position" ]]; then
    show_log_tail "$recovered"
    rm -f -- "$recovered"
    die "could not recover Galera node $n's position"
  fi
  rm -f -- "$recovered"
  galera_launch "$n" --wsrep-start-position="$position"
}

# ---------------------------------------------------------------- PostgreSQL primary and standby

pg_cluster_dir() { echo "$PG_BASE/$1"; }      # primary | standby
pg_cluster_port() { if [[ "$1" == primary ]]; then echo "$PG_PRIMARY_PORT"; else echo "$PG_STANDBY_PORT"; fi; }
pg_cluster_log() { echo "$PG_CLUSTER_LOG.$1.log"; }

pg_ctl_as() { # role pg_ctl-args...
  local role=$1
  shift
  as_pg "$PG_BIN/pg_ctl" -D "$(pg_cluster_dir "$role")/data" "$@"
}

pg_cluster_running() { # role
  [[ -f "$(pg_cluster_dir "$1")/data/PG_VERSION" ]] && pg_ctl_as "$1" status >/dev/null 2>&1
}

pg_cluster_psql() { # role, SQL on stdin, as the bootstrap superuser over the role's socket
  as_pg "$PSQL" -X -q -t -A -v ON_ERROR_STOP=1 -h "$(pg_cluster_dir "$1")" -p "$(pg_cluster_port "$1")" -U postgres -d postgres
}

# Both servers take the same settings but for their port and socket. The primary's
# synchronous_standby_names is set by ALTER SYSTEM after pg_basebackup copied its configuration, so
# the standby never waits for a standby of its own: once promoted it commits alone.
pg_cluster_start() { # role
  local role=$1 dir opts
  dir="$(pg_cluster_dir "$role")"
  opts="-c listen_addresses=127.0.0.1 -c port=$(pg_cluster_port "$role") -c unix_socket_directories=$dir"
  opts+=" -c max_connections=200 -c password_encryption=scram-sha-256 -c fsync=off -c full_page_writes=off"
  opts+=" -c synchronous_commit=on -c wal_level=replica -c hot_standby=on -c max_wal_senders=5"
  opts+=" -c max_replication_slots=5 -c wal_receiver_status_interval=1s -c cluster_name=$role"
  check_ports_free "$(pg_cluster_port "$role")"
  touch "$(pg_cluster_log "$role")"
  chown "$PG_OS_USER": "$(pg_cluster_log "$role")" 2>/dev/null || true
  log "starting PostgreSQL $role on 127.0.0.1:$(pg_cluster_port "$role") (log: $(pg_cluster_log "$role"))"
  local attempt
  for attempt in 1 2 3; do
    if pg_ctl_as "$role" -l "$(pg_cluster_log "$role")" -o "$opts" -w -t "$START_TIMEOUT" start >&2; then
      return 0
    fi
    # A port in the ephemeral range may be held for a moment by a client's end of a connection.
    tail -n 5 "$(pg_cluster_log "$role")" | grep -q 'Address already in use' || break
    log "port $(pg_cluster_port "$role") busy; trying again ($attempt)"
    sleep 2
  done
  show_log_tail "$(pg_cluster_log "$role")"
  die "PostgreSQL $role did not start on port $(pg_cluster_port "$role") (port already in use?)"
}

pg_cluster_stop() { # role
  local role=$1 pid_file pid
  pid_file="$(pg_cluster_dir "$role")/data/postmaster.pid"
  if [[ -f "$pid_file" ]]; then
    pid="$(head -n 1 "$pid_file")"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      log "stopping PostgreSQL $role (pid $pid)"
      kill -INT "$pid" 2>/dev/null || true
      wait_for_exit "$pid" 30 || { kill -KILL "$pid" 2>/dev/null || true; wait_for_exit "$pid" 5 || true; }
    fi
  fi
  rm -rf -- "$(pg_cluster_dir "$role")"
}

pg_os_user_setup() {
  if is_root; then
    PG_OS_USER=postgres
    id -u postgres >/dev/null 2>&1 || die "user 'postgres' does not exist (is the postgresql package installed?)"
  else
    PG_OS_USER="$(id -un)"
  fi
}

pg_pair_start() { # mode: sync | async
  local mode=$1 primary standby
  primary="$(pg_cluster_dir primary)"
  standby="$(pg_cluster_dir standby)"
  if pg_cluster_running primary && pg_cluster_running standby; then
    log "PostgreSQL primary and standby already running"
    return 0
  fi
  pg_cluster_stop standby
  pg_cluster_stop primary
  mkdir -p -- "$primary" "$standby"
  chown "$PG_OS_USER": "$PG_BASE" "$primary" "$standby"
  chmod 0700 "$primary" "$standby"
  : >"$(pg_cluster_log primary)"
  chown "$PG_OS_USER": "$(pg_cluster_log primary)" 2>/dev/null || true
  log "initdb $primary/data"
  if ! as_pg "$PG_BIN/initdb" -D "$primary/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --locale=C --no-sync >>"$(pg_cluster_log primary)" 2>&1; then
    show_log_tail "$(pg_cluster_log primary)"
    die "initdb failed"
  fi
  # The primary starts alone: a commit waits for a synchronous standby, so it names none until the
  # standby streams.
  pg_cluster_start primary ""
  pg_cluster_psql primary <<SQL >/dev/null || die "could not create the PostgreSQL role/database '$DB_USER'/'$DB_NAME'"
CREATE ROLE $DB_USER LOGIN CREATEDB PASSWORD '$DB_PASSWORD';
CREATE DATABASE $DB_NAME OWNER $DB_USER;
SELECT pg_create_physical_replication_slot('standby');
SQL
  log "pg_basebackup into $standby/data ($mode standby)"
  if ! as_pg "$PG_BIN/pg_basebackup" -h "$primary" -p "$PG_PRIMARY_PORT" -U postgres -D "$standby/data" \
      -R -X stream -S standby -c fast --no-sync >>"$(pg_cluster_log primary)" 2>&1; then
    show_log_tail "$(pg_cluster_log primary)"
    die "pg_basebackup failed"
  fi
  pg_cluster_start standby ""
  if [[ "$mode" == sync ]]; then
    echo "ALTER SYSTEM SET synchronous_standby_names = '*'; SELECT pg_reload_conf();" | pg_cluster_psql primary >/dev/null ||
      die "could not make the standby synchronous"
  fi
  # Ready when the primary sees its standby streaming, as a synchronous one in sync mode.
  local i state=""
  for ((i = 0; i < START_TIMEOUT * 10; i++)); do
    state="$(echo "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'" | pg_cluster_psql primary || true)"
    if [[ "$mode" == sync && "$state" == sync ]] || [[ "$mode" == async && "$state" == async ]]; then break; fi
    sleep 0.1
  done
  [[ "$state" == "$mode" ]] || die "the standby is not streaming as $mode (state: '${state:-none}')"
  log "PostgreSQL ready: primary 127.0.0.1:$PG_PRIMARY_PORT, $mode standby 127.0.0.1:$PG_STANDBY_PORT"
}

cmd_pg_kill_primary() {
  local pid_file pid
  pid_file="$(pg_cluster_dir primary)/data/postmaster.pid"
  [[ -f "$pid_file" ]] || die "the PostgreSQL primary is not running"
  pid="$(head -n 1 "$pid_file")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || die "the PostgreSQL primary is not running"
  # As a crash of its machine: the postmaster and every backend at once (a backend whose postmaster
  # died would otherwise still answer its open connection for a moment). Stopped first, the
  # postmaster forks no backend while they are listed.
  kill -STOP "$pid"
  local children
  children="$(pgrep -P "$pid" | tr '\n' ' ' || true)"
  log "SIGKILL PostgreSQL primary (postmaster pid $pid and its processes $children)"
  # shellcheck disable=SC2086
  kill -KILL "$pid" $children 2>/dev/null || true
  wait_for_exit "$pid" 10 || die "the PostgreSQL primary (pid $pid) survived SIGKILL"
}

cmd_pg_promote() {
  pg_ctl_as standby -w -t 30 promote >&2 || die "pg_ctl promote failed"
}

# ---------------------------------------------------------------- commands

ensure_cluster_binaries() {
  if ! find_pg_bin; then
    apt_install postgresql
    find_pg_bin || die "PostgreSQL server binaries still not found after installing"
  fi
  if ! find_psql; then
    apt_install postgresql-client
    find_psql || die "psql not found after installing postgresql-client"
  fi
  [[ -x "$PG_BIN/pg_basebackup" ]] || die "pg_basebackup not found next to $PG_BIN/postgres"
  if ! find_mariadb_bins; then
    apt_install mariadb-server mariadb-client
    find_mariadb_bins || die "MariaDB binaries still not found after installing"
  fi
  if [[ ! -f "$GALERA_PROVIDER" ]]; then
    apt_install galera-4
    [[ -f "$GALERA_PROVIDER" ]] || die "$GALERA_PROVIDER still missing after installing galera-4"
  fi
  if ! command -v rsync >/dev/null 2>&1; then
    apt_install rsync
  fi
}

cmd_cluster_start() {
  ensure_cluster_binaries
  pg_os_user_setup
  mkdir -p -- "$BASE" "$PG_BASE"
  chmod 0755 "$BASE"
  # The PostgreSQL pair starts while the Galera nodes do, and the joiners join together (one waits
  # for the donor while the other receives its state transfer).
  local n pg_pid joiners=() failed=0
  pg_pair_start "$PG_REPLICATION" &
  pg_pid=$!
  galera_start_node 1 || failed=1
  if [[ "$failed" -eq 0 ]]; then
    for ((n = 2; n <= GALERA_NODES; n++)); do
      galera_start_node "$n" &
      joiners+=($!)
    done
  fi
  for n in "${joiners[@]}"; do wait "$n" || failed=1; done
  wait "$pg_pid" || failed=1
  [[ "$failed" -eq 0 ]] || die "the cluster did not start (see above); '$0 stop' removes what did"
  log "cluster is up"
  cluster_export_lines
}

cmd_cluster_stop() {
  local n
  for ((n = GALERA_NODES; n >= 1; n--)); do
    galera_stop_node "$n"
  done
  pg_os_user_setup
  pg_cluster_stop standby
  pg_cluster_stop primary
  rm -rf -- "$PG_BASE"
  log "stopped (logs kept in $BASE)"
}

cmd_cluster_status() {
  local rc=0 n role
  find_mariadb_bins || true
  for ((n = 1; n <= GALERA_NODES; n++)); do
    if galera_pid "$n" >/dev/null; then
      echo "galera node $n: 127.0.0.1:$(galera_sql_port "$n"), pid $(galera_pid "$n"), $(galera_state "$n" || echo 'no answer')"
    else
      echo "galera node $n: not running"
      rc=1
    fi
  done
  find_pg_bin && find_psql || true
  pg_os_user_setup
  for role in primary standby; do
    if [[ -n "$PG_BIN" ]] && pg_cluster_running "$role"; then
      echo "postgresql $role: 127.0.0.1:$(pg_cluster_port "$role"), in recovery: $(echo 'SELECT pg_is_in_recovery()' | pg_cluster_psql "$role" || echo '?')"
    else
      echo "postgresql $role: not running"
      rc=1
    fi
  done
  return "$rc"
}

cluster_usage() {
  sed -n '2,38p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

cluster_main() {
  [[ $# -ge 1 ]] || cluster_usage
  case "$1" in
    env) cluster_export_lines; return 0 ;;
    -h | --help | help) cluster_usage ;;
  esac
  validate_cluster_settings
  case "$1" in
    start) cmd_cluster_start ;;
    stop) cmd_cluster_stop ;;
    status) cmd_cluster_status ;;
    galera-kill) cmd_galera_kill "${2:-}" ;;
    galera-rejoin) cmd_galera_rejoin "${2:-}" ;;
    pg-kill-primary) cmd_pg_kill_primary ;;
    pg-promote) find_pg_bin || die "PostgreSQL binaries not found"; pg_os_user_setup; cmd_pg_promote ;;
    pg-rebuild)
      [[ "${2:-}" == sync || "${2:-}" == async ]] || die "pg-rebuild takes sync or async, got '${2:-}'"
      find_pg_bin && find_psql || die "PostgreSQL binaries not found"
      pg_os_user_setup
      pg_cluster_stop standby
      pg_cluster_stop primary
      pg_pair_start "$2" ;;
    *) cluster_usage ;;
  esac
}

cluster_main "$@"
