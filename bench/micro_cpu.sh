#!/usr/bin/env bash
# The CPU score's stability: `dbscale micro cpu` 10 runs of 2 s per mode (as the Cloud Report
# repeats CoreMark), median, 95% interval and CV. Extra arguments go to `dbscale micro cpu`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH=python .venv/bin/python -m dbscale micro cpu -n 10 --seconds 2 "$@"
