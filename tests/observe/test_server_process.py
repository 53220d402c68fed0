"""Finding a local server's processes and reading its process tree."""

from __future__ import annotations

from pathlib import Path

from dbscale.modes import Dialect
from dbscale.observe.procfs import ProcFs
from dbscale.observe.server_process import (
    allowed_cpus,
    find_listener,
    postmaster_of_backend,
    read_server_times,
)
from dbscale.targets.url import Endpoint
from tests.observe.conftest import fixture_text, write_process


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
    assert find_listener(proc, Endpoint(Dialect.POSTGRESQL, "127.0.0.1", 0x9C9B)) == 100
    assert find_listener(proc, Endpoint(Dialect.POSTGRESQL, "127.0.0.1", 5432)) is None
    assert find_listener(proc, Endpoint(Dialect.POSTGRESQL, "192.0.2.1", 0x9C9B)) is None


def test_backend_parent_when_fds_are_unreadable(fake_proc: Path) -> None:
    proc = _listening_tree(fake_proc)
    assert postmaster_of_backend(proc, Endpoint(Dialect.POSTGRESQL, "127.0.0.1", 1), 101) == 100
    assert postmaster_of_backend(proc, Endpoint(Dialect.POSTGRESQL, "127.0.0.1", 1), 999) is None


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
