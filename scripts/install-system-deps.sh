#!/usr/bin/env bash
# Installs the Debian packages dbscale's tests and demo need when they are missing: PostgreSQL's
# server programs (initdb, pg_ctl, postgres, psql, pgbench), openssl, and Chromium with a font for
# the report's browser test, MariaDB's server (mariadbd, mariadb-install-db, mariadb) with
# Galera's provider and rsync (local clusters), sysbench,
# PgBouncer (a local target's pooler for pooling: on), and the micro-benchmarks' peers fio, iperf3
# and sockperf, valgrind, and Prometheus with promtool.
# Does nothing when they are there. No system service is made or started: PostgreSQL's default
# cluster is not created, and a policy-rc.d keeps MariaDB's service down during the install;
# dbscale runs its own private servers.
set -euo pipefail

have_pg() {
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null
}

have_mariadb() {
    command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]
}

missing=()
have_pg || missing+=(postgresql postgresql-contrib)
have_mariadb || missing+=(mariadb-server)
command -v sysbench >/dev/null || missing+=(sysbench)
# Local clusters (url: local-cluster): Galera's provider, and rsync for its joiners' copies.
compgen -G "/usr/lib/galera*/libgalera_smm.so" >/dev/null || [ -f /usr/lib/libgalera_smm.so ] \
    || missing+=(galera-4)
command -v rsync >/dev/null || missing+=(rsync)
command -v openssl >/dev/null || missing+=(openssl)
command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-dejavu-core)
# The micro-benchmarks' peers: fio (storage), iperf3 and sockperf (bench/vs_iperf3.sh).
command -v fio >/dev/null || missing+=(fio)
command -v iperf3 >/dev/null || missing+=(iperf3)
command -v sockperf >/dev/null || missing+=(sockperf)
# The client-cost guard (tests/bench_guard): callgrind counts instructions per transaction.
command -v valgrind >/dev/null || missing+=(valgrind)
# Watching a study (issue 43): a real Prometheus scrapes `--metrics-addr` in the tests, and
# promtool reads `dbscale export openmetrics` files. Its service is kept down like MariaDB's.
command -v prometheus >/dev/null && command -v promtool >/dev/null || missing+=(prometheus)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "error: missing system packages: ${missing[*]}" >&2
    echo "hint: install them with your package manager (as root: apt-get install ${missing[*]})" >&2
    exit 1
fi

echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [[ " ${missing[*]} " == *" postgresql "* ]]; then
    apt-get install -y -qq postgresql-common >/dev/null
    conf=/etc/postgresql-common/createcluster.conf
    if grep -q '^#\?\s*create_main_cluster' "$conf"; then
        sed -i 's/^#\?\s*create_main_cluster.*/create_main_cluster = false/' "$conf"
    else
        echo "create_main_cluster = false" >>"$conf"
    fi
fi
# invoke-rc.d asks policy-rc.d before starting a service; 101 means "not now". Ours is removed
# afterwards; one already there is left alone.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# Written by dbscale install-system-deps.sh for the install only.\nexit 101\n' >"$policy"
    chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
fi
apt-get install -y -qq "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
