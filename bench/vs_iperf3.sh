#!/usr/bin/env bash
# dbscale micro net's stream throughput against iperf3 on loopback, alternating (vs_iperf3.py).
# Extra arguments go to vs_iperf3.py (e.g. --rounds 5 --streams 2 --seconds 5).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH=python .venv/bin/python bench/vs_iperf3.py "$@"
