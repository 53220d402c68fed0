#!/usr/bin/env bash
# Opt-in soak (never in `make test`): an hour of TPC-B with dbscale's RSS, open files and threads
# sampled per minute (see soak.py). Uses $DBSCALE_BENCH_PG_URL when set; otherwise starts the
# private servers and loads TPC-B scale 10 for the duration.
# Extra arguments go to soak.py (e.g. --duration 10m --sample 20 --clients 8).
set -euo pipefail
cd "$(dirname "$0")/.."
url="${DBSCALE_BENCH_PG_URL:-}"
if [ -z "$url" ]; then
  . bench/servers.bash
  DBSCALE_REQUIRE_SERVERS=1 bench_servers_start
  url="postgresql://postgres@127.0.0.1:${DBSCALE_TEST_PG_PORT}/postgres"
  PYTHONPATH=python .venv/bin/python -m dbscale prepare tpcb --target "$url" --set scale=10 >/dev/null
fi
PYTHONPATH=python .venv/bin/python bench/soak.py --url "$url" "$@"  # no exec: the trap stops servers
