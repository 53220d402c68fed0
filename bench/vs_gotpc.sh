#!/usr/bin/env bash
# dbscale against go-tpc v1.0.7 on MariaDB, TPC-C nowait, alternating in one run (see
# vs_gotpc.py). Uses $DBSCALE_BENCH_MYSQL_URL (and $DBSCALE_BENCH_PG_URL for dbscale's load rate on
# PostgreSQL) when set; otherwise starts private servers for the duration.
# Extra arguments go to vs_gotpc.py (e.g. --repeat 5 --duration 20 --warehouses 2 --threads 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-go-tpc.sh
. bench/servers.bash
bench_mysql_pg_urls tpcc_bench postgres
.venv/bin/python bench/vs_gotpc.py "${urls[@]}" "$@"  # no exec: the EXIT trap stops the servers
