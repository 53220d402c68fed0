#!/usr/bin/env bash
# dbscale against pgbench, side by side on one PostgreSQL (see vs_pgbench.py for what is measured).
# Uses $DBSCALE_BENCH_PG_URL when set; otherwise starts the private test server for the duration.
# Extra arguments go to vs_pgbench.py (e.g. --repeat 5 --duration 20 --scale 10).
# DBSCALE_BENCH_PIN=1 (with the private server only): the server's processes on CPU 1, both tools
# on CPU 0, so neither tool competes with the server for a core and client CPU compares cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/servers.bash
bench_pg_url
pin=()
if [ "${DBSCALE_BENCH_PIN:-0}" = 1 ] && [ -n "${DBSCALE_TEST_PG_DIR:-}" ]; then
  postmaster=$(head -1 "$DBSCALE_TEST_PG_DIR/data/postmaster.pid")
  # Backends forked later inherit the postmaster's affinity; its running children are moved too.
  for pid in "$postmaster" $(pgrep -P "$postmaster"); do taskset -a -p -c 1 "$pid" >/dev/null; done
  pin=(taskset -c 0)
fi
"${pin[@]}" .venv/bin/python bench/vs_pgbench.py --url "$url" "$@"  # no exec: the EXIT trap stops the server
