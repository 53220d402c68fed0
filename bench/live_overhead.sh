#!/usr/bin/env bash
# What watching a study costs: runs with --web scraped every second against runs without,
# alternating, judged by `dbscale compare` (see live_overhead.py). Uses $DBSCALE_BENCH_PG_URL when
# set; otherwise starts the private test server for the duration (TPC-B loaded at scale 1 first).
# Extra arguments go to live_overhead.py (e.g. --repeat 10 --duration 10 --clients 4).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/servers.bash
bench_pg_url
.venv/bin/dbscale prepare tpcb --target "$url" --set scale=1 >/dev/null
.venv/bin/python bench/live_overhead.py --url "$url" "$@"  # no exec: the EXIT trap stops the server
