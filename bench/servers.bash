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

# Sets the array $urls to `--mysql-url URL --pg-url URL`: $DBSCALE_BENCH_MYSQL_URL and
# $DBSCALE_BENCH_PG_URL when set, else the private test servers' (started for the duration of the
# script) with the databases $1 (MariaDB) and $2 (PostgreSQL).
bench_mysql_pg_urls() {
  urls=()
  [ -n "${DBSCALE_BENCH_MYSQL_URL:-}" ] && urls+=(--mysql-url "$DBSCALE_BENCH_MYSQL_URL")
  [ -n "${DBSCALE_BENCH_PG_URL:-}" ] && urls+=(--pg-url "$DBSCALE_BENCH_PG_URL")
  if [ ${#urls[@]} -eq 0 ]; then
    DBSCALE_REQUIRE_SERVERS=1 bench_servers_start
    urls=(--mysql-url "mysql://root@127.0.0.1:${DBSCALE_TEST_MYSQL_PORT}/$1"
          --pg-url "postgresql://postgres@127.0.0.1:${DBSCALE_TEST_PG_PORT}/$2")
  fi
}
