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

# Sets $url: $DBSCALE_BENCH_PG_URL when given, else the private test server's over plain TCP
# (TLS would measure the cipher, not the client), started for the duration of the script.
bench_pg_url() {
  url="${DBSCALE_BENCH_PG_URL:-}"
  if [ -z "$url" ]; then
    bench_servers_start
    url="${DBSCALE_TEST_PG_URL}?sslmode=disable"
  fi
}
