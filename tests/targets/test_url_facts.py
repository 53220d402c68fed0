"""What a target URL says: its dialect, its first host and port, whether it is on this machine."""

from __future__ import annotations

import pytest

from dbscale.modes import Dialect
from dbscale.targets.url import (
    Endpoint,
    dialect_of,
    endpoint_of,
    is_local_host,
    is_private_url,
    keyvalue_pairs,
    loopback_postgres,
    on_this_machine,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p@127.0.0.1:6543/db", Endpoint(Dialect.POSTGRESQL, "127.0.0.1", 6543)),
        ("postgres://db1/bench", Endpoint(Dialect.POSTGRESQL, "db1", 5432)),
        (
            "postgresql://u@/db?host=/var/run/pg&port=5444",
            Endpoint(Dialect.POSTGRESQL, "/var/run/pg", 5444),
        ),
        ("postgresql://u@%2Ftmp%2Fpg:5433/db", Endpoint(Dialect.POSTGRESQL, "/tmp/pg", 5433)),
        ("host=/tmp port=5499 dbname=x", Endpoint(Dialect.POSTGRESQL, "/tmp", 5499)),
        ("mysql://root@127.0.0.1:33099/sbtest", Endpoint(Dialect.MYSQL, "127.0.0.1", 33099)),
        ("mariadb://root@localhost/sbtest", Endpoint(Dialect.MYSQL, "localhost", 3306)),
    ],
)
def test_endpoints(url: str, expected: Endpoint) -> None:
    assert endpoint_of(url) == expected


def test_socket_paths_and_dialects() -> None:
    assert Endpoint(Dialect.POSTGRESQL, "/run/pg", 5432).unix_socket == "/run/pg/.s.PGSQL.5432"
    assert Endpoint(Dialect.MYSQL, "/run/mysqld.sock", 3306).unix_socket == "/run/mysqld.sock"
    assert Endpoint(Dialect.POSTGRESQL, "db1", 5432).unix_socket is None
    assert dialect_of("mysql://x") == "mysql"
    assert dialect_of("host=/tmp") == "postgresql"


def test_local_hosts() -> None:
    assert is_local_host("127.0.0.1")
    assert is_local_host("")
    assert is_local_host("/tmp")
    assert not is_local_host("192.0.2.1")  # TEST-NET-1: never an address of this machine
    assert not is_local_host("no-such-host.invalid")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://a:5433,b:5434/db", Endpoint(Dialect.POSTGRESQL, "a", 5433)),
        (
            "postgresql://u@h1/db,postgresql://u@h2:6000/db",
            Endpoint(Dialect.POSTGRESQL, "h1", 5432),
        ),
        ("host=h1,h2 port=6001,6002", Endpoint(Dialect.POSTGRESQL, "h1", 6001)),
        ("host='/tmp/a dir' port=5499", Endpoint(Dialect.POSTGRESQL, "/tmp/a dir", 5499)),
        ("mysql://root@/db?socket=/run/m.sock", Endpoint(Dialect.MYSQL, "/run/m.sock", 3306)),
        ("postgresql://u@h:notaport/db", Endpoint(Dialect.POSTGRESQL, "h", 5432)),
    ],
)
def test_host_lists_and_odd_urls_give_the_first_host(url: str, expected: Endpoint) -> None:
    assert endpoint_of(url) == expected


def test_keyvalue_pairs_unquote() -> None:
    pairs = keyvalue_pairs("host=h PassWord='it\\'s' dbname = x")
    assert pairs == {"host": "h", "password": "it's", "dbname": "x"}


def test_private_and_loopback_urls() -> None:
    assert all(is_private_url(u) for u in ("local", "Local-Cluster", " embedded "))
    assert not is_private_url("postgresql://local/db")
    assert loopback_postgres("postgresql://u@127.0.0.1:5999/db") == ("127.0.0.1", 5999)
    assert loopback_postgres("postgresql://u@localhost/db") == ("localhost", 5432)
    assert loopback_postgres("postgresql://u@db1/db") is None
    assert loopback_postgres("mysql://u@127.0.0.1/db") is None
    assert loopback_postgres("postgresql://u@/db?host=/tmp") is None
    assert on_this_machine("postgresql://u@127.0.0.1/db")
    assert not on_this_machine("postgresql://u@192.0.2.1/db")


def test_dialects_read_older_names() -> None:
    assert Dialect("postgres") is Dialect.POSTGRESQL
    assert Dialect("mariadb") is Dialect.MYSQL
    assert dialect_of("MariaDB://x") is Dialect.MYSQL
