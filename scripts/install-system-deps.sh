#!/usr/bin/env bash
# Installs the Debian packages dbscale's tests and demo need when they are missing: PostgreSQL's
# server programs (initdb, pg_ctl, postgres, psql, pgbench) and openssl. Does nothing when they
# are there. PostgreSQL's default cluster is not created: dbscale runs its own private servers.
set -euo pipefail

have_pg() {
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null
}

missing=()
have_pg || missing+=(postgresql postgresql-contrib)
command -v openssl >/dev/null || missing+=(openssl)
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
apt-get install -y -qq "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
