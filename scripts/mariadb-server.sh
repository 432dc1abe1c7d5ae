#!/usr/bin/env bash
# Starts or stops a throw-away MariaDB server on 127.0.0.1 for the WordPress tests (test/wordpress,
# docs/sdk-wordpress.md).
#   scripts/mariadb-server.sh start DIR PORT   -> prints the root user's "host:port" (no password)
#   scripts/mariadb-server.sh stop DIR
# It runs as a non-root user and installs the server when it is missing.
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?data directory}

find_bin() {
  local name=$1 found
  found=$(command -v "$name" 2>/dev/null || true)
  [ -z "$found" ] && [ -x "/usr/sbin/$name" ] && found=/usr/sbin/$name
  echo "$found"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u tollgate-db -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
  port=${3:?port}
  if [ -z "$(find_bin mariadbd)" ] || [ -z "$(find_bin mariadb-install-db)" ]; then
    echo "installing mariadb-server" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq mariadb-server >&2
  fi
  mariadbd=$(find_bin mariadbd)
  install_db=$(find_bin mariadb-install-db)
  if [ "$(id -u)" = 0 ] && ! id tollgate-db >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin tollgate-db
  fi
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown tollgate-db "$dir"
  as_owner "$install_db" --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
    --skip-test-db >"$dir/install.log" 2>&1
  # Small buffers and no durability: the server lives for one test run.
  as_owner "$mariadbd" --no-defaults --datadir="$dir/data" --socket="$dir/mysqld.sock" \
    --pid-file="$dir/mysqld.pid" --port="$port" --bind-address=127.0.0.1 --skip-name-resolve \
    --skip-log-bin --innodb-buffer-pool-size=32M --innodb-log-file-size=16M \
    --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 --performance-schema=OFF \
    --log-error="$dir/server.log" >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    if [ -S "$dir/mysqld.sock" ] && grep -q "ready for connections" "$dir/server.log" 2>/dev/null; then
      echo "127.0.0.1:$port"
      exit 0
    fi
    sleep 0.25
  done
  echo "mariadb did not start; its log:" >&2
  cat "$dir/server.log" >&2 || true
  exit 1
  ;;
stop)
  if [ -f "$dir/mysqld.pid" ]; then
    pid=$(cat "$dir/mysqld.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 120); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start DIR PORT | stop DIR" >&2
  exit 2
  ;;
esac
