#!/usr/bin/env bash
# Real production engines on this machine, for tests: Elasticsearch 8, Neo4j 5, Milvus 2.3
# (standalone) and PostgreSQL (the manifest). They come from Maven Central, PyPI and,
# for PostgreSQL, Debian's package (installed with apt-get when missing), nothing else.
#
#   deploy/local/engines.sh start    # idempotent; returns once all four answer, or fails
#   deploy/local/engines.sh status   # one line per engine
#   deploy/local/engines.sh stop     # stops all four
#
# Environment (defaults in brackets):
#   KBFLOW_ES_URL [http://127.0.0.1:9200]  KBFLOW_NEO4J_URI [bolt://127.0.0.1:7687]
#   KBFLOW_MILVUS_URI [http://127.0.0.1:19530]
#   KBFLOW_PG_URL [postgresql://kbflow@127.0.0.1:55432/kbflow] (trust authentication, loopback;
#                 not 5432, where a system PostgreSQL may already listen)
#   KBFLOW_ENGINES_DIR   runtime dir: data, logs, pid files [/tmp/kbflow-engines]
#   KBFLOW_ENGINES_CACHE unpacked engines [~/.cache/kbflow/engines; /var/cache/... as root]
#   KBFLOW_ES_VERSION [8.19.21]  KBFLOW_ENGINES_TIMEOUT seconds per engine [300]
#   KBFLOW_ENGINES_USER  unprivileged user that runs Elasticsearch and PostgreSQL when started
#                        as root [kbflow]
#
# Elasticsearch is the "integ-test-zip" distribution that Elastic publishes to Maven Central
# (org.elasticsearch.distribution.integ-test-zip:elasticsearch): the server, security and the
# Netty transport, but not the analysis-common module, so the `cjk` analyzer
# is missing (`whitespace` is built into the server). deploy/local/es-analysis-plugin adds `cjk`
# from Lucene as a stable plugin, so kbflow's index template is the same here and on a full
# distribution.
# Elasticsearch and PostgreSQL refuse to run as root: as root, this script creates the system user
# $KBFLOW_ENGINES_USER (useradd, no login shell) and starts it with `runuser`; that is why the
# cache is outside /root, which other users cannot enter.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
RUN_DIR=${KBFLOW_ENGINES_DIR:-/tmp/kbflow-engines}
if [[ $(id -u) == 0 ]]; then
  CACHE_DIR=${KBFLOW_ENGINES_CACHE:-/var/cache/kbflow/engines}
else
  CACHE_DIR=${KBFLOW_ENGINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbflow/engines}
fi
ES_VERSION=${KBFLOW_ES_VERSION:-8.19.21}
ES_URL=${KBFLOW_ES_URL:-http://127.0.0.1:9200}
NEO4J_URI=${KBFLOW_NEO4J_URI:-bolt://127.0.0.1:7687}
MILVUS_URI=${KBFLOW_MILVUS_URI:-http://127.0.0.1:19530}
PG_URL=${KBFLOW_PG_URL:-postgresql://kbflow@127.0.0.1:55432/kbflow}
TIMEOUT=${KBFLOW_ENGINES_TIMEOUT:-300}
RUN_USER=${KBFLOW_ENGINES_USER:-kbflow}
PYTHON=${KBFLOW_PYTHON:-$REPO/.venv/bin/python}
ES_HOME=$CACHE_DIR/elasticsearch-$ES_VERSION
LAUNCHER=$HERE/neo4j-launcher
PLUGIN=$HERE/es-analysis-plugin

log() { echo "engines: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Maven, quiet unless it fails (then its output is shown).
mvn_quiet() {
  local out
  out=$(mktemp)
  if ! mvn -B -q -Dstyle.color=never "$@" >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    return 1
  fi
  rm -f "$out"
}

# host and port of scheme://[user@]host:port[/path]
host_port() { local hp=${1#*://}; hp=${hp%%/*}; echo "${hp##*@}"; }
host_of() { local hp; hp=$(host_port "$1"); echo "${hp%:*}"; }
port_of() { local hp; hp=$(host_port "$1"); echo "${hp##*:}"; }

# pid from a pid file if that process is alive, else nothing.
live_pid() {
  local pid
  [[ -f $1 ]] || return 1
  pid=$(<"$1")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Run "$2..." until it succeeds; fail after $TIMEOUT s, or at once if pid file $1 is dead.
wait_until() {
  local pidfile=$1 name=$2 logfile=$3; shift 3
  local deadline=$((SECONDS + TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if ! live_pid "$pidfile" >/dev/null; then
      tail -n 30 "$logfile" >&2 || true
      die "$name exited during start-up; log: $logfile"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 30 "$logfile" >&2 || true
      die "$name not healthy after ${TIMEOUT}s; log: $logfile (raise KBFLOW_ENGINES_TIMEOUT?)"
    fi
    sleep 1
  done
}

# As root: the unprivileged system user that runs Elasticsearch and PostgreSQL.
ensure_run_user() {
  id "$RUN_USER" >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"
}

# "$@" as $RUN_USER when this script runs as root, else as the caller.
as_run_user() {
  if [[ $(id -u) == 0 ]]; then runuser -u "$RUN_USER" -- "$@"; else "$@"; fi
}

# The JDK that `java` on PATH belongs to (the integ-test zip has no bundled JDK).
java_home() { dirname "$(dirname "$(readlink -f "$(command -v java)")")"; }

# ---- Elasticsearch ------------------------------------------------------------------------------

es_healthy() {
  curl -fsS --max-time 5 "$ES_URL/_cluster/health?wait_for_status=yellow&timeout=2s" 2>/dev/null |
    grep -Eq '"status":"(yellow|green)"'
}

# The `cjk` analyzer as a stable plugin, compiled against the distribution's own jars.
es_build_plugin() {
  local out=$1/plugins/kbflow-analysis lib=$1/lib classes
  classes=$(mktemp -d)
  javac -nowarn --release 17 -d "$classes" \
    -cp "$(printf '%s:' "$lib"/elasticsearch-plugin-*api-*.jar "$lib"/lucene-*.jar)" \
    "$PLUGIN/src/kbflow/CjkAnalyzerFactory.java"
  mkdir -p "$out"
  jar cf "$out/kbflow-analysis.jar" -C "$classes" .
  rm -rf "$classes"
  sed "s/@ES_VERSION@/$ES_VERSION/" "$PLUGIN/stable-plugin-descriptor.properties" \
    >"$out/stable-plugin-descriptor.properties"
  cp "$PLUGIN/named_components.json" "$out/"
}

es_install() {
  [[ -x $ES_HOME/bin/elasticsearch && -f $ES_HOME/plugins/kbflow-analysis/kbflow-analysis.jar ]] &&
    return
  command -v mvn >/dev/null || die "mvn not found: install Maven (apt-get install maven)"
  mkdir -p "$CACHE_DIR"
  log "fetching Elasticsearch $ES_VERSION (Maven Central, cached in ~/.m2)"
  mvn_quiet dependency:copy \
    -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" \
    -DoutputDirectory="$CACHE_DIR" ||
    die "cannot fetch org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip"
  local tmp=$CACHE_DIR/.unpack-$$
  rm -rf "$tmp" && mkdir -p "$tmp"
  unzip -q "$CACHE_DIR/elasticsearch-$ES_VERSION.zip" -d "$tmp"
  es_build_plugin "$tmp/elasticsearch-$ES_VERSION" || die "cannot build $PLUGIN"
  rm -rf "$ES_HOME"
  mv "$tmp/elasticsearch-$ES_VERSION" "$ES_HOME"
  rm -rf "$tmp" "$CACHE_DIR/elasticsearch-$ES_VERSION.zip"
}

es_start() {
  local dir=$RUN_DIR/elasticsearch
  if live_pid "$dir/pid" >/dev/null || es_healthy; then return; fi
  es_install
  mkdir -p "$dir/data" "$dir/logs" "$dir/config"
  cp -r "$ES_HOME/config/." "$dir/config/"
  cat >"$dir/config/elasticsearch.yml" <<EOF
cluster.name: kbflow-test
node.name: kbflow-es
network.host: $(host_of "$ES_URL")
http.port: $(port_of "$ES_URL")
discovery.type: single-node
path.data: $dir/data
path.logs: $dir/logs
xpack.security.enabled: false
cluster.routing.allocation.disk.threshold_enabled: false
EOF
  # TieredStopAtLevel=1 (C1 only), here and for Neo4j: on 2 shared cores it halves start-up,
  # and test workloads are too short for C2 to pay off.
  local env=(env "ES_JAVA_HOME=$(java_home)" "ES_PATH_CONF=$dir/config"
             "ES_JAVA_OPTS=-Xms512m -Xmx512m -XX:TieredStopAtLevel=1" "ES_TMPDIR=$dir/tmp")
  mkdir -p "$dir/tmp"
  rm -f "$dir/pid"
  if [[ $(id -u) == 0 ]]; then
    ensure_run_user
    chown -R "$RUN_USER" "$dir"
    runuser -u "$RUN_USER" -- "${env[@]}" "$ES_HOME/bin/elasticsearch" -d -p "$dir/pid" \
      >"$dir/start.log" 2>&1 || { cat "$dir/start.log" >&2; die "Elasticsearch did not start"; }
  else
    "${env[@]}" "$ES_HOME/bin/elasticsearch" -d -p "$dir/pid" >"$dir/start.log" 2>&1 ||
      { cat "$dir/start.log" >&2; die "Elasticsearch did not start"; }
  fi
}

# ---- Neo4j --------------------------------------------------------------------------------------

neo4j_healthy() { [[ -f $RUN_DIR/neo4j/ready ]] && live_pid "$RUN_DIR/neo4j/pid" >/dev/null; }

neo4j_start() {
  local dir=$RUN_DIR/neo4j
  if live_pid "$dir/pid" >/dev/null; then return; fi
  if [[ ! -f $LAUNCHER/target/classes/kbflow/Main.class ||
        $LAUNCHER/src/main/java/kbflow/Main.java -nt $LAUNCHER/target/classes/kbflow/Main.class ||
        $LAUNCHER/pom.xml -nt $LAUNCHER/target/classes/kbflow/Main.class ]]; then
    command -v mvn >/dev/null || die "mvn not found: install Maven (apt-get install maven)"
    log "building the Neo4j launcher (Maven Central, cached in ~/.m2)"
    (cd "$LAUNCHER" && rm -rf target/lib && mvn_quiet package) || die "cannot build $LAUNCHER"
  fi
  mkdir -p "$dir/home"
  rm -f "$dir/ready"
  setsid nohup java -Xms256m -Xmx512m -XX:TieredStopAtLevel=1 \
    -cp "$LAUNCHER/target/classes:$LAUNCHER/target/lib/*" \
    kbflow.Main "$dir/home" "$(host_of "$NEO4J_URI")" "$(port_of "$NEO4J_URI")" "$dir/ready" \
    >"$dir/neo4j.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
}

# ---- Milvus -------------------------------------------------------------------------------------

milvus_healthy() {
  timeout 20 "$PYTHON" -c 'import sys; from pymilvus import MilvusClient
MilvusClient(uri=sys.argv[1], timeout=5).list_collections()' "$MILVUS_URI"
}

# Milvus 2.3 standalone (C++, HNSW), from PyPI's `milvus` wheel: its `milvus-server` launcher
# unpacks the binary into the data dir and runs it with an embedded etcd. The Milvus Lite server
# that this script ran before read every row in Python on each search (bench/RESULTS.md
# "Scale"); one left running by it on a warm machine is stopped first, as it holds the port.
# The proxy's time tick (200 ms by default) paces how soon a strong read sees a write.
milvus_start() {
  local dir=$RUN_DIR/milvus-standalone server
  stop_one "Milvus Lite server" "$RUN_DIR/milvus/pid"
  if live_pid "$dir/pid" >/dev/null; then return; fi
  server=$(dirname "$PYTHON")/milvus-server
  [[ -x $server ]] || die "no $server: run 'make install' (the dev extra installs it)"
  mkdir -p "$dir"
  PROXY_TIMETICKINTERVAL=20 setsid nohup "$server" --data "$dir/data" \
    --proxy-port "$(port_of "$MILVUS_URI")" >"$dir/milvus.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
}

# ---- PostgreSQL (the manifest) -----------------------------------------------------------------

# The newest PostgreSQL server binaries: Debian's layout first, then PATH.
pg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [[ -z $dir && -n $(command -v pg_ctl) ]] && dir=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
  [[ -n $dir && -x $dir/postgres ]] && echo "$dir"
}

pg_install() {
  pg_bindir >/dev/null && return
  [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null ||
    die "PostgreSQL not found: install Debian's postgresql package (apt-get install postgresql)"
  log "installing PostgreSQL (Debian package)"
  { apt-get update -q && apt-get install -y -q --no-install-recommends postgresql; } \
    >"$RUN_DIR/apt.log" 2>&1 ||
    { tail -n 20 "$RUN_DIR/apt.log" >&2; die "apt-get install postgresql failed"; }
}

pg_user() { local u=${PG_URL#*://}; u=${u%%@*}; echo "${u%%:*}"; }
pg_database() { echo "${PG_URL##*/}"; }

pg_healthy() {
  "$(pg_bindir)/pg_isready" -q -h "$(host_of "$PG_URL")" -p "$(port_of "$PG_URL")"
}

pg_start() {
  local dir=$RUN_DIR/postgres bin
  if live_pid "$dir/pid" >/dev/null; then return; fi
  pg_install
  bin=$(pg_bindir)
  mkdir -p "$dir"
  [[ $(id -u) == 0 ]] && { ensure_run_user; chown -R "$RUN_USER" "$dir"; }
  if [[ ! -f $dir/data/PG_VERSION ]]; then
    as_run_user "$bin/initdb" -D "$dir/data" -U "$(pg_user)" --auth=trust -E UTF8 --no-locale \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  fi
  # A test engine: durability settings off (the tests never crash PostgreSQL itself).
  as_run_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t "$TIMEOUT" start \
    -o "-h $(host_of "$PG_URL") -p $(port_of "$PG_URL") -k $dir -c fsync=off \
        -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=64MB" \
    >"$dir/start.log" 2>&1 || { cat "$dir/start.log" "$dir/postgres.log" >&2
                                die "PostgreSQL did not start"; }
  head -n 1 "$dir/data/postmaster.pid" >"$dir/pid"
  as_run_user "$bin/psql" -q -h "$dir" -p "$(port_of "$PG_URL")" -U "$(pg_user)" -d postgres \
    -tc "SELECT 1 FROM pg_database WHERE datname = '$(pg_database)'" | grep -q 1 ||
    as_run_user "$bin/createdb" -h "$dir" -p "$(port_of "$PG_URL")" -U "$(pg_user)" \
      "$(pg_database)"
}

# ---- commands -----------------------------------------------------------------------------------

start() {
  local began=$SECONDS
  mkdir -p "$RUN_DIR"
  # Launch all three, then wait: start-up times overlap instead of adding up.
  es_start
  neo4j_start
  milvus_start
  pg_start
  if [[ -f $RUN_DIR/elasticsearch/pid ]]; then
    wait_until "$RUN_DIR/elasticsearch/pid" Elasticsearch \
      "$RUN_DIR/elasticsearch/logs/kbflow-test.log" es_healthy
  else
    es_healthy || die "Elasticsearch at $ES_URL is not healthy"
  fi
  log "Elasticsearch healthy after $((SECONDS - began))s"
  wait_until "$RUN_DIR/neo4j/pid" Neo4j "$RUN_DIR/neo4j/neo4j.log" neo4j_healthy
  log "Neo4j healthy after $((SECONDS - began))s"
  wait_until "$RUN_DIR/milvus-standalone/pid" Milvus "$RUN_DIR/milvus-standalone/milvus.log" \
    milvus_healthy
  wait_until "$RUN_DIR/postgres/pid" PostgreSQL "$RUN_DIR/postgres/postgres.log" pg_healthy
  log "all engines healthy after $((SECONDS - began))s: $ES_URL $NEO4J_URI $MILVUS_URI $PG_URL"
}

# Stops the engine whose pid file is $2; with a third argument "group", its whole process group
# (a launcher and the server it started).
stop_one() {
  local name=$1 pidfile=$2 pid target
  if ! pid=$(live_pid "$pidfile"); then
    rm -f "$pidfile"
    return
  fi
  target=$pid
  [[ ${3:-} == group ]] && target=-$pid
  kill -TERM -- "$target"
  for _ in $(seq 60); do kill -0 -- "$target" 2>/dev/null || break; sleep 0.5; done
  if kill -0 -- "$target" 2>/dev/null; then
    log "$name (pid $pid) ignored SIGTERM for 30s: killing it"
    kill -KILL -- "$target"
  fi
  rm -f "$pidfile"
  log "$name stopped"
}

stop() {
  stop_one Elasticsearch "$RUN_DIR/elasticsearch/pid"
  stop_one Neo4j "$RUN_DIR/neo4j/pid"
  stop_one Milvus "$RUN_DIR/milvus-standalone/pid" group
  stop_one PostgreSQL "$RUN_DIR/postgres/pid"
}

status_one() {
  local name=$1 pidfile=$2 url=$3 check=$4 pid
  if pid=$(live_pid "$pidfile"); then
    if $check >/dev/null 2>&1; then
      echo "$name: running (pid $pid), healthy at $url"
    else
      echo "$name: running (pid $pid), not healthy yet at $url"
    fi
  else
    echo "$name: stopped"
  fi
}

status() {
  status_one elasticsearch "$RUN_DIR/elasticsearch/pid" "$ES_URL" es_healthy
  status_one neo4j "$RUN_DIR/neo4j/pid" "$NEO4J_URI" neo4j_healthy
  status_one milvus "$RUN_DIR/milvus-standalone/pid" "$MILVUS_URI" milvus_healthy
  status_one postgres "$RUN_DIR/postgres/pid" "$PG_URL" pg_healthy
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
