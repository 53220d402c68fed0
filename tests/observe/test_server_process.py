"""Finding a local server's processes and reading its process tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.observe.procfs import ProcFs
from dbscale.observe.server_process import (
    Endpoint,
    allowed_cpus,
    dialect_of,
    find_listener,
    is_local_host,
    parse_endpoint,
    postmaster_of_backend,
    read_server_times,
)
from tests.observe.conftest import fixture_text, write_process


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p@127.0.0.1:6543/db", Endpoint("postgresql", "127.0.0.1", 6543)),
        ("postgres://db1/bench", Endpoint("postgresql", "db1", 5432)),
        (
            "postgresql://u@/db?host=/var/run/pg&port=5444",
            Endpoint("postgresql", "/var/run/pg", 5444),
        ),
        ("postgresql://u@%2Ftmp%2Fpg:5433/db", Endpoint("postgresql", "/tmp/pg", 5433)),
        ("host=/tmp port=5499 dbname=x", Endpoint("postgresql", "/tmp", 5499)),
        ("mysql://root@127.0.0.1:33099/sbtest", Endpoint("mysql", "127.0.0.1", 33099)),
        ("mariadb://root@localhost/sbtest", Endpoint("mysql", "localhost", 3306)),
    ],
)
def test_endpoints(url: str, expected: Endpoint) -> None:
    assert parse_endpoint(url) == expected


def test_socket_paths_and_dialects() -> None:
    assert Endpoint("postgresql", "/run/pg", 5432).unix_socket == "/run/pg/.s.PGSQL.5432"
    assert Endpoint("mysql", "/run/mysqld.sock", 3306).unix_socket == "/run/mysqld.sock"
    assert Endpoint("postgresql", "db1", 5432).unix_socket is None
    assert dialect_of("mysql://x") == "mysql"
    assert dialect_of("host=/tmp") == "postgresql"


def test_local_hosts() -> None:
    assert is_local_host("127.0.0.1")
    assert is_local_host("")
    assert is_local_host("/tmp")
    assert not is_local_host("192.0.2.1")  # TEST-NET-1: never an address of this machine
    assert not is_local_host("no-such-host.invalid")


def _listening_tree(root: Path) -> ProcFs:
    """A postmaster (100) with two backends, listening on 127.0.0.1:0x9C9B (40091)."""
    write_process(root, 100, ppid=1, children=(101, 102), utime=10, cutime=500, cstime=200,
                  run_ns=10**9, io=(4096, 8192))  # fmt: skip
    write_process(root, 101, ppid=100, utime=300, stime=100, run_ns=3 * 10**9, wait_ns=10**9,
                  io=(0, 1024))  # fmt: skip
    write_process(root, 102, ppid=100, comm="postgres", threads=(102, 103), run_ns=2 * 10**9)
    (root / "net").mkdir()
    (root / "net" / "tcp").write_text(fixture_text("net_tcp.txt"))
    (root / "net" / "unix").write_text(fixture_text("net_unix.txt"))
    fd = root / "101" / "fd"
    fd.mkdir()
    (fd / "3").symlink_to("socket:[94370]")  # a forked child still holds the listener
    (fd / "0").symlink_to("/dev/null")
    return ProcFs(root)


def test_listener_found_and_walked_up_to_the_postmaster(fake_proc: Path) -> None:
    proc = _listening_tree(fake_proc)
    assert find_listener(proc, Endpoint("postgresql", "127.0.0.1", 0x9C9B)) == 100
    assert find_listener(proc, Endpoint("postgresql", "127.0.0.1", 5432)) is None
    assert find_listener(proc, Endpoint("postgresql", "192.0.2.1", 0x9C9B)) is None


def test_backend_parent_when_fds_are_unreadable(fake_proc: Path) -> None:
    proc = _listening_tree(fake_proc)
    assert postmaster_of_backend(proc, Endpoint("postgresql", "127.0.0.1", 1), 101) == 100
    assert postmaster_of_backend(proc, Endpoint("postgresql", "127.0.0.1", 1), 999) is None


def test_server_tree_times(fake_proc: Path) -> None:
    proc = _listening_tree(fake_proc)
    times = read_server_times(proc, 100)
    assert times is not None
    assert times.processes == 3
    assert times.user_ticks == 10 + 500 + 300
    assert times.system_ticks == 200 + 100
    assert (times.read_bytes, times.write_bytes) == (4096, 9216)
    assert set(times.sched) == {100, 101, 102, 103}  # threads of 102 read one by one
    assert times.sched[101] == (3 * 10**9, 10**9)
    assert allowed_cpus(proc, 100) == 2
    assert read_server_times(proc, 999) is None
