#!/usr/bin/env bash
# Starts or stops a throw-away PostgreSQL server on 127.0.0.1 for the test suite.
#   scripts/pg-server.sh start DIR PORT   -> prints the DATABASE_URL
#   scripts/pg-server.sh stop DIR
# It runs as a non-root user (PostgreSQL refuses root); installs the server when it is missing.
# PG_OPTIONS adds server options (e.g. the benchmarks' `-c shared_preload_libraries=pg_stat_statements`).
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?data directory}

find_bin() {
  local name=$1 found
  found=$(command -v "$name" 2>/dev/null || true)
  [ -z "$found" ] && found=$(ls -d /usr/lib/postgresql/*/bin/"$name" 2>/dev/null | sort -V | tail -n 1 || true)
  echo "$found"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u tollgate-pg -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
  port=${3:?port}
  if [ -z "$(find_bin initdb)" ] || [ -z "$(find_bin pg_ctl)" ]; then
    echo "installing postgresql" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
  fi
  initdb=$(find_bin initdb)
  pg_ctl=$(find_bin pg_ctl)
  if [ "$(id -u)" = 0 ] && ! id tollgate-pg >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin tollgate-pg
  fi
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown tollgate-pg "$dir"
  as_owner "$initdb" -D "$dir/data" -U tollgate --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
  as_owner "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off ${PG_OPTIONS:-}" start >&2
  echo "postgres://tollgate@127.0.0.1:$port/postgres"
  ;;
stop)
  pg_ctl=$(find_bin pg_ctl)
  if [ -n "$pg_ctl" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start DIR PORT | stop DIR" >&2
  exit 2
  ;;
esac
