#!/usr/bin/env bash
# dbscale micro disk against fio run directly on the same jobs, alternating (vs_fio.py).
# Extra arguments go to vs_fio.py (e.g. --rounds 5 --jobs rd-latency --runtime 5 --dir /data/x).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH=python .venv/bin/python bench/vs_fio.py "$@"
