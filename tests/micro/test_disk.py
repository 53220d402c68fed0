"""`dbscale micro disk`: fio's jobs on a file in an empty directory, fsync latencies read, the
test file removed afterwards (Ctrl-C too), foreign directories refused."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbscale.errors import ConfigError
from dbscale.micro.disk import DATA_FILE, measure
from tests.conftest import REPO, skip_or_fail


@pytest.fixture
def disk_dir() -> Path:
    if shutil.which("fio") is None:
        skip_or_fail("fio is not installed (make system-deps)")
    directory = Path("/var/tmp") / f"dbscale-test-disk-{os.getpid()}"
    shutil.rmtree(directory, ignore_errors=True)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_two_jobs_give_iops_latency_and_fsync(disk_dir: Path) -> None:
    result = measure(disk_dir, jobs=["wr-iops-tpcc-fsync", "rd-latency"], size_bytes=8 << 20,
                     runtime_s=1.0).record()  # fmt: skip
    fsync_job, read_job = result["jobs"]  # type: ignore[misc]
    assert fsync_job["job"] == "wr-iops-tpcc-fsync" and fsync_job["write"]["iops"] > 0
    assert fsync_job["fsync"]["count"] > 0 and "99" in fsync_job["fsync"]["latency_us"]
    assert read_job["read"]["iops"] > 0 and read_job["read"]["latency_us"]["50"] > 0
    assert not (disk_dir / DATA_FILE).exists(), "the test file is removed"


def test_a_directory_with_other_files_is_refused(disk_dir: Path) -> None:
    disk_dir.mkdir(parents=True)
    (disk_dir / "precious.db").write_text("not dbscale's")
    with pytest.raises(ConfigError, match="holds files dbscale did not create"):
        measure(disk_dir, jobs=["rd-latency"], size_bytes=8 << 20, runtime_s=1.0)
    assert (disk_dir / "precious.db").read_text() == "not dbscale's"


def _interrupt_a_disk_run(disk_dir: Path, sig: signal.Signals) -> tuple[int, str]:
    """Starts `dbscale micro disk`, sends `sig` once fio's file exists; exit code and stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "micro", "disk", "--dir", str(disk_dir), "--size", "16",
         "--runtime", "10s", "--jobs", "wr-latency"],
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while not (disk_dir / DATA_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    return proc.returncode, stderr


def test_ctrl_c_removes_the_test_file(disk_dir: Path) -> None:
    code, stderr = _interrupt_a_disk_run(disk_dir, signal.SIGINT)
    assert code == 130, stderr
    assert "Traceback" not in stderr
    assert not (disk_dir / DATA_FILE).exists()


def test_sigterm_is_exit_143_with_one_error_line(disk_dir: Path) -> None:
    """typer turns a KeyboardInterrupt into a bare exit 130; the signal's own code and one
    `error:`/`hint:` pair are what a SIGTERM gets (as `dbscale run` does)."""
    code, stderr = _interrupt_a_disk_run(disk_dir, signal.SIGTERM)
    assert code == 143, stderr
    assert "error: interrupted (SIGTERM)" in stderr and "hint: " in stderr
    assert not (disk_dir / DATA_FILE).exists()
