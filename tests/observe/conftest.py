"""Fixtures for the observation tests: captured /proc files, and a fake /proc tree."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.fixture
def fake_proc(tmp_path: Path) -> Path:
    root = tmp_path / "proc"
    root.mkdir()
    return root


def write_process(
    root: Path,
    pid: int,
    *,
    ppid: int,
    comm: str = "postgres",
    utime: int = 0,
    stime: int = 0,
    cutime: int = 0,
    cstime: int = 0,
    threads: tuple[int, ...] = (),
    children: tuple[int, ...] = (),
    run_ns: int = 0,
    wait_ns: int = 0,
    io: tuple[int, int] | None = (0, 0),
) -> None:
    """A process directory as the kernel shows it, with what observation reads."""
    proc = root / str(pid)
    tids = threads or (pid,)
    stat = (
        f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 0 0 0 0 0 {utime} {stime} {cutime} {cstime} "
        f"20 0 {len(tids)} 0 1000 0 0\n"
    )
    (proc / "task").mkdir(parents=True)
    (proc / "stat").write_text(stat)
    (proc / "schedstat").write_text(f"{run_ns} {wait_ns} 10\n")
    for tid in tids:
        task = proc / "task" / str(tid)
        task.mkdir()
        (task / "stat").write_text(stat.replace(f"{pid} (", f"{tid} (", 1))
        (task / "schedstat").write_text(f"{run_ns // len(tids)} {wait_ns // len(tids)} 5\n")
        (task / "comm").write_text(comm + "\n")
        (task / "children").write_text(" ".join(str(c) for c in children) if tid == pid else "")
    if io is not None:
        (proc / "io").write_text(f"rchar: 1\nwchar: 2\nread_bytes: {io[0]}\nwrite_bytes: {io[1]}\n")
    (proc / "status").write_text(f"Name:\t{comm}\nCpus_allowed_list:\t0-1\n")
