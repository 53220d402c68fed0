#!/usr/bin/env bash
# dbscale's tpch against go-tpc v1.0.7's on MariaDB: load and query times, alternating in one run
# (see vs_gotpc_tpch.py). Uses $DBSCALE_BENCH_MYSQL_URL when set; otherwise starts private
# servers for the duration. go-tpc's scale factor is a whole number: scale factor 1 loads 8.7
# million rows, minutes per round on a 2-core machine.
# Extra arguments go to vs_gotpc_tpch.py (e.g. --repeat 3 --threads 2 --sf 1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-go-tpc.sh
. bench/servers.bash
bench_mysql_pg_urls tpch_bench postgres
.venv/bin/python bench/vs_gotpc_tpch.py "${urls[@]}" "$@"  # no exec: the EXIT trap stops the servers
