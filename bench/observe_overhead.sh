#!/usr/bin/env bash
# What observation costs: the same runs with and without it (see observe_overhead.py).
# Uses $DBSCALE_BENCH_PG_URL when set; otherwise starts the private test server for the duration.
# Extra arguments go to observe_overhead.py (e.g. --repeat 6 --duration 10 --clients 16).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/servers.bash
bench_pg_url
.venv/bin/python bench/observe_overhead.py --url "$url" "$@"  # no exec: the EXIT trap stops the server
