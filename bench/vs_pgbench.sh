#!/usr/bin/env bash
# dbscale against pgbench, side by side on one PostgreSQL (see vs_pgbench.py for what is measured).
# Uses $DBSCALE_BENCH_PG_URL when set; otherwise starts the private test server for the duration.
# Extra arguments go to vs_pgbench.py (e.g. --repeat 5 --duration 20 --scale 10).
set -euo pipefail
cd "$(dirname "$0")/.."
url="${DBSCALE_BENCH_PG_URL:-}"
if [ -z "$url" ]; then
  . bench/servers.bash
  bench_servers_start
  # Plain TCP for both tools: TLS would measure the cipher, not the client.
  url="${DBSCALE_TEST_PG_URL}?sslmode=disable"
fi
.venv/bin/python bench/vs_pgbench.py --url "$url" "$@"  # no exec: the EXIT trap stops the server
