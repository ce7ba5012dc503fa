#!/usr/bin/env bash
# A throwaway Apache Kafka broker (or three) in KRaft mode for the tests, from Maven Central's jars
# (no Docker, no distribution archive).
#
# Usage:
#   scripts/kafka.sh start          resolve the broker's jars if needed (Maven), format and start the
#                                   node(s), wait until they serve, print export lines
#   scripts/kafka.sh stop           stop every node and delete its data (the jars are kept)
#   scripts/kafka.sh status         show what is running (exit 0 only if every node runs)
#   scripts/kafka.sh env            print the export lines only
#   scripts/kafka.sh stop-node N    stop node N (1-based) with SIGTERM, keeping its data
#   scripts/kafka.sh start-node N   start node N again on its data
#
#   env_lines="$(scripts/kafka.sh start)" && eval "$env_lines"
#
# Settings (environment):
#   IDEMPOTENCY_KAFKA_DIR              base directory for jars, data and logs
#                                      (default /tmp/idempotency-kafka)
#   KAFKA_BROKERS                      number of nodes: 1 (default) or 3
#   IDEMPOTENCY_KAFKA_PORT             client port of node 1; node N listens on PORT+N-1 (default 19092)
#   IDEMPOTENCY_KAFKA_CONTROLLER_PORT  controller port of node 1, likewise (default 19192)
#   IDEMPOTENCY_KAFKA_HEAP             heap of each node (default 384m)
#
# Each node is a combined broker and controller (process.roles=broker,controller) listening on
# 127.0.0.1 only. With three nodes, the internal topics are replicated three times with
# min.insync.replicas=2, so that one node can be stopped and started again. The default ports lie
# below Linux's range of ephemeral client ports (32768-60999). Data is throwaway.

set -euo pipefail

export LC_ALL=C

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE="${IDEMPOTENCY_KAFKA_DIR:-/tmp/idempotency-kafka}"
if [[ -z "${KAFKA_BROKERS:-}" && -f "$BASE/brokers" ]]; then
  BROKERS="$(cat "$BASE/brokers")"   # the running cluster's size, for stop-node, start-node, env
else
  BROKERS="${KAFKA_BROKERS:-1}"
fi
PORT="${IDEMPOTENCY_KAFKA_PORT:-19092}"
CONTROLLER_PORT="${IDEMPOTENCY_KAFKA_CONTROLLER_PORT:-19192}"
HEAP="${IDEMPOTENCY_KAFKA_HEAP:-384m}"
KAFKA_VERSION=4.4.0
LIB="$BASE/lib-$KAFKA_VERSION"
START_TIMEOUT=90                  # seconds for every node to serve

log() { printf '[kafka] %s\n' "$*" >&2; }
die() { printf '[kafka] ERROR: %s\n' "$*" >&2; exit 1; }

validate_settings() {
  [[ "$BROKERS" == 1 || "$BROKERS" == 3 ]] || die "KAFKA_BROKERS must be 1 or 3, not '$BROKERS'"
  local p
  for p in "$PORT" "$CONTROLLER_PORT"; do
    [[ "$p" =~ ^[0-9]+$ && "$p" -ge 1024 && "$p" -le 65000 ]] || die "port '$p' is not a number in 1024-65000"
  done
  (( PORT + BROKERS <= CONTROLLER_PORT || CONTROLLER_PORT + BROKERS <= PORT )) ||
    die "client ports $PORT.. and controller ports $CONTROLLER_PORT.. overlap"
}

node_dir() { echo "$BASE/node-$1"; }
node_port() { echo $((PORT + $1 - 1)); }
node_pid_file() { echo "$(node_dir "$1")/kafka.pid"; }

node_pid() { # n : prints the pid of a running node
  local f pid
  f="$(node_pid_file "$1")"
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

bootstrap() {
  local n list=""
  for ((n = 1; n <= BROKERS; n++)); do list+="${list:+,}127.0.0.1:$(node_port "$n")"; done
  echo "$list"
}

export_lines() {
  echo "export IDEMPOTENCY_KAFKA_BOOTSTRAP=$(bootstrap)"
  echo "export IDEMPOTENCY_KAFKA_BROKERS=$BROKERS"
}

ensure_jars() {
  if [[ -f "$LIB/.complete" ]]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found: it resolves the broker's jars from Maven Central"
  command -v java >/dev/null 2>&1 || die "java not found"
  log "resolving org.apache.kafka:kafka_2.13:$KAFKA_VERSION and its dependencies into $LIB"
  rm -rf -- "$LIB"
  mkdir -p -- "$LIB"
  local mvn_log="$BASE/resolve.log"
  if ! mvn -B -ntp -q -f "$ROOT/scripts/kafka/pom.xml" dependency:copy-dependencies \
      -Dkafka.version="$KAFKA_VERSION" -DincludeScope=runtime -DoutputDirectory="$LIB" >"$mvn_log" 2>&1; then
    tail -n 30 "$mvn_log" >&2
    die "could not resolve the broker's jars (see $mvn_log)"
  fi
  touch "$LIB/.complete"
}

kafka_java() { # main class and arguments, in the foreground
  java -Xms64m -Xmx"$HEAP" -XX:+UseSerialGC -Dlog4j2.configurationFile="$BASE/log4j2.properties" \
    -cp "$LIB/*" "$@"
}

write_config() { # n
  local n="$1" dir voters="" i rf
  dir="$(node_dir "$n")"
  for ((i = 1; i <= BROKERS; i++)); do voters+="${voters:+,}$i@127.0.0.1:$((CONTROLLER_PORT + i - 1))"; done
  rf=$((BROKERS >= 3 ? 3 : 1))
  mkdir -p -- "$dir/data"
  cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$(node_port "$n"),CONTROLLER://127.0.0.1:$((CONTROLLER_PORT + n - 1))
advertised.listeners=PLAINTEXT://127.0.0.1:$(node_port "$n")
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=3
default.replication.factor=$rf
min.insync.replicas=$((rf >= 3 ? 2 : 1))
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$((rf >= 3 ? 2 : 1))
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$((rf >= 3 ? 2 : 1))
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
auto.create.topics.enable=true
log.flush.interval.messages=9223372036854775807
PROPS
}

write_log_config() {
  cat >"$BASE/log4j2.properties" <<'PROPS'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.kafka.name = kafka
logger.kafka.level = WARN
logger.org.name = org.apache.kafka
logger.org.level = WARN
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
PROPS
}

format_node() { # n
  local n="$1" dir
  dir="$(node_dir "$n")"
  [[ -f "$dir/data/meta.properties" ]] && return 0
  log "formatting node $n in $dir/data"
  if ! kafka_java kafka.tools.StorageTool format -t "$(cat "$BASE/cluster.id")" \
      -c "$dir/server.properties" >"$dir/format.log" 2>&1; then
    cat "$dir/format.log" >&2
    die "formatting node $n failed"
  fi
}

launch_node() { # n : starts the JVM in the background
  local n="$1" dir
  dir="$(node_dir "$n")"
  if node_pid "$n" >/dev/null; then
    log "node $n already running (pid $(node_pid "$n"))"
    return 0
  fi
  log "starting node $n on 127.0.0.1:$(node_port "$n") (log: $dir/kafka.log)"
  # The log is appended to: this start is ready when it holds one more "started" line than now.
  grep -c "Kafka Server started" "$dir/kafka.log" 2>/dev/null >"$dir/starts" || echo 0 >"$dir/starts"
  # Detached from the caller's stdout: `$(kafka.sh start)` waits for every writer of its pipe.
  nohup java -Xms64m -Xmx"$HEAP" -XX:+UseSerialGC -Dlog4j2.configurationFile="$BASE/log4j2.properties" \
    -cp "$LIB/*" kafka.Kafka "$dir/server.properties" </dev/null >>"$dir/kafka.log" 2>&1 &
  echo $! >"$(node_pid_file "$n")"
}

wait_for_node() { # n
  local n="$1" dir i before
  dir="$(node_dir "$n")"
  before="$(cat "$dir/starts" 2>/dev/null || echo 0)"
  for ((i = 0; i < START_TIMEOUT * 5; i++)); do
    if [[ "$(grep -c "Kafka Server started" "$dir/kafka.log" 2>/dev/null || true)" -gt "$before" ]] &&
        (exec 3<>"/dev/tcp/127.0.0.1/$(node_port "$n")") 2>/dev/null; then
      return 0
    fi
    if ! node_pid "$n" >/dev/null; then
      tail -n 30 "$dir/kafka.log" >&2
      die "node $n exited during startup (port $(node_port "$n") already in use?)"
    fi
    sleep 0.2
  done
  tail -n 30 "$dir/kafka.log" >&2
  die "node $n did not serve within ${START_TIMEOUT}s"
}

stop_node() { # n
  local n="$1" pid i
  pid="$(node_pid "$n")" || return 0
  log "stopping node $n (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    kill -0 "$pid" 2>/dev/null || { rm -f -- "$(node_pid_file "$n")"; return 0; }
    sleep 0.1
  done
  log "node $n did not stop within 30s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f -- "$(node_pid_file "$n")"
}

cmd_start() {
  mkdir -p -- "$BASE"
  ensure_jars
  write_log_config
  if [[ -f "$BASE/brokers" && "$(cat "$BASE/brokers")" != "$BROKERS" ]]; then
    local m running=""
    for ((m = 1; m <= 3; m++)); do node_pid "$m" >/dev/null && running="$running $m"; done
    if [[ -n "$running" ]]; then
      die "a cluster of $(cat "$BASE/brokers") node(s) is running (node(s)$running); run '$0 stop' first to make one of $BROKERS"
    fi
    # Nothing runs on the old data: it is a test cluster's leftover, not worth keeping.
    log "removing the stopped cluster of $(cat "$BASE/brokers") node(s) left in $BASE to make one of $BROKERS"
    rm -rf -- "$BASE"/node-* "$BASE/cluster.id" "$BASE/brokers"
  fi
  if [[ ! -f "$BASE/cluster.id" ]]; then
    kafka_java kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 >"$BASE/cluster.id.tmp"
    [[ -s "$BASE/cluster.id.tmp" ]] || die "kafka.tools.StorageTool random-uuid printed nothing"
    mv -- "$BASE/cluster.id.tmp" "$BASE/cluster.id"
  fi
  echo "$BROKERS" >"$BASE/brokers"
  local n
  for ((n = 1; n <= BROKERS; n++)); do
    write_config "$n"
    format_node "$n"
  done
  for ((n = 1; n <= BROKERS; n++)); do launch_node "$n"; done
  for ((n = 1; n <= BROKERS; n++)); do wait_for_node "$n"; done
  log "ready: $(bootstrap) (Kafka $KAFKA_VERSION, $BROKERS node(s))"
  export_lines
}

cmd_stop() {
  local n
  for ((n = 1; n <= 3; n++)); do stop_node "$n"; done
  rm -rf -- "$BASE"/node-* "$BASE/cluster.id" "$BASE/brokers"
  log "stopped; data removed (jars kept in $LIB)"
}

cmd_status() {
  local n rc=0 pid
  for ((n = 1; n <= BROKERS; n++)); do
    if pid="$(node_pid "$n")"; then
      echo "kafka node $n: running on 127.0.0.1:$(node_port "$n"), pid $pid"
    else
      echo "kafka node $n: not running"
      rc=1
    fi
  done
  return "$rc"
}

node_arg() { # n
  [[ "${1:-}" =~ ^[0-9]+$ && "$1" -ge 1 && "$1" -le "$BROKERS" ]] || die "node must be 1..$BROKERS, not '${1:-}'"
}

usage() {
  sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

main() {
  [[ $# -ge 1 ]] || usage
  validate_settings
  case "$1" in
    env) export_lines ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    stop-node) node_arg "${2:-}"; stop_node "$2" ;;
    start-node) node_arg "${2:-}"; launch_node "$2"; wait_for_node "$2" ;;
    -h | --help | help) usage ;;
    *) usage ;;
  esac
}

main "$@"
