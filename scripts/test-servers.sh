#!/usr/bin/env bash
# Starts or stops the private test servers with the same code as dbscale's embedded target and
# writes/removes the env file the tests source: scripts/test-servers.sh start|stop [ENV_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
action="${1:?usage: scripts/test-servers.sh start|stop [ENV_FILE]}"
env_file="${2:-.cache/test-servers.env}"
python="${PYTHON:-.venv/bin/python}"
[ -x "$python" ] || python=python3
PYTHONPATH="python${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m dbscale.testing.servers "$action" --env-file "$env_file"
