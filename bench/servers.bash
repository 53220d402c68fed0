# Sourced by the bench/*.sh scripts: starts the private test servers with their own env file for
# the duration of the script (stopped by an EXIT trap, so callers must not `exec` their last
# command) and exports their DBSCALE_TEST_* variables.
bench_servers_start() {
  bench_env_file=.cache/bench-servers.env
  trap 'bash scripts/test-servers.sh stop "$bench_env_file" >/dev/null 2>&1 || true' EXIT
  bash scripts/test-servers.sh start "$bench_env_file"
  # shellcheck disable=SC1090
  set -a; . "$bench_env_file"; set +a
}
