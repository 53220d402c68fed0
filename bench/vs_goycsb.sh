#!/usr/bin/env bash
# dbscale against go-ycsb v1.0.3, YCSB core workloads on MariaDB and PostgreSQL, alternating in one
# run (see vs_goycsb.py). Uses $DBSCALE_BENCH_MYSQL_URL and $DBSCALE_BENCH_PG_URL when set;
# otherwise starts private servers for the duration.
# Extra arguments go to vs_goycsb.py (e.g. --repeat 5 --operations 100000 --workloads a,c).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-go-ycsb.sh
. bench/servers.bash
bench_mysql_pg_urls ycsb_bench ycsb_bench
.venv/bin/python bench/vs_goycsb.py "${urls[@]}" "$@"  # no exec: the EXIT trap stops the servers
