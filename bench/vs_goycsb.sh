#!/usr/bin/env bash
# dbscale against go-ycsb v1.0.3, YCSB core workloads on MariaDB and PostgreSQL, alternating in one
# run (see vs_goycsb.py). Uses $DBSCALE_BENCH_MYSQL_URL and $DBSCALE_BENCH_PG_URL when set;
# otherwise starts private servers for the duration.
# Extra arguments go to vs_goycsb.py (e.g. --repeat 5 --operations 100000 --workloads a,c).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-go-ycsb.sh
urls=()
[ -n "${DBSCALE_BENCH_MYSQL_URL:-}" ] && urls+=(--mysql-url "$DBSCALE_BENCH_MYSQL_URL")
[ -n "${DBSCALE_BENCH_PG_URL:-}" ] && urls+=(--pg-url "$DBSCALE_BENCH_PG_URL")
if [ ${#urls[@]} -eq 0 ]; then
  . bench/servers.bash
  DBSCALE_REQUIRE_SERVERS=1 bench_servers_start
  urls=(--mysql-url "mysql://root@127.0.0.1:${DBSCALE_TEST_MYSQL_PORT}/ycsb_bench"
        --pg-url "postgresql://postgres@127.0.0.1:${DBSCALE_TEST_PG_PORT}/ycsb_bench")
fi
.venv/bin/python bench/vs_goycsb.py "${urls[@]}" "$@"  # no exec: the EXIT trap stops the servers
