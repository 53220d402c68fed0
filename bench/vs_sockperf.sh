#!/usr/bin/env bash
# dbscale micro net's request/response against sockperf's TCP ping-pong on loopback, alternating
# (vs_sockperf.py). Extra arguments go to vs_sockperf.py (e.g. --rounds 5 --seconds 5).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH=python .venv/bin/python bench/vs_sockperf.py "$@"
