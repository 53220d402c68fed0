#!/usr/bin/env bash
# One run from one process against the same run over 2 Ray workers on this host, alternating
# (scaleout.py). Uses $DBSCALE_BENCH_PG_URL when set; otherwise starts the private test server.
# Extra arguments go to scaleout.py (e.g. --rounds 5 --clients 8 --duration 10).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/servers.bash
bench_pg_url
.venv/bin/dbscale prepare tpcb --target "$url" --set scale=1 >/dev/null
PYTHONPATH=python .venv/bin/python bench/scaleout.py --url "$url" "$@"  # no exec: the EXIT trap stops the server
