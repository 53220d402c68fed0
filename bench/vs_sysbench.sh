#!/usr/bin/env bash
# dbscale against sysbench, side by side on MariaDB and PostgreSQL (see vs_sysbench.py for what is
# measured). Uses $DBSCALE_BENCH_MYSQL_URL and/or $DBSCALE_BENCH_PG_URL when set; otherwise starts
# private servers with the test-server script (its own env file) for the duration.
# Extra arguments go to vs_sysbench.py (e.g. --repeat 5 --duration 20 --rand-type uniform).
set -euo pipefail
cd "$(dirname "$0")/.."
urls=()
[ -n "${DBSCALE_BENCH_MYSQL_URL:-}" ] && urls+=(--url "$DBSCALE_BENCH_MYSQL_URL")
[ -n "${DBSCALE_BENCH_PG_URL:-}" ] && urls+=(--url "$DBSCALE_BENCH_PG_URL")
if [ ${#urls[@]} -eq 0 ]; then
  . bench/servers.bash
  DBSCALE_REQUIRE_SERVERS=1 bench_servers_start
  "$DBSCALE_TEST_PG_BIN/psql" -X -q -h "$DBSCALE_TEST_PG_SOCKET_DIR" -p "$DBSCALE_TEST_PG_PORT" \
    -U postgres -d postgres -c 'CREATE DATABASE sbtest'
  # sbtest exists on the MariaDB; root@127.0.0.1 has no password there.
  urls=(--url "mysql://root@127.0.0.1:${DBSCALE_TEST_MYSQL_PORT}/sbtest"
        --url "postgresql://postgres@127.0.0.1:${DBSCALE_TEST_PG_PORT}/sbtest")
fi
.venv/bin/python bench/vs_sysbench.py "${urls[@]}" "$@"  # no exec: the EXIT trap stops the servers
