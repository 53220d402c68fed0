#!/usr/bin/env bash
# dbscale's peak RSS and connect time at rising connection counts against a private MariaDB
# with its thread pool, extrapolated to 10,000 connections (see many_connections.py).
# Extra arguments go to many_connections.py (e.g. --clients 500,1000,2000,4000 --duration 3).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH=python .venv/bin/python bench/many_connections.py "$@"
