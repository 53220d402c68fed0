"""Nothing measured is lost or mixed, under faults: SIGTERM and SIGHUP mid-study, a torn last
line of runs.jsonl, a reused --out, and a results directory on a full filesystem. Each test
checks the exit code, what runs.jsonl holds, and that --resume finishes the study."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbscale.errors import EXIT_FAILURE
from tests.conftest import REPO
from tests.integration.conftest import Outcome, dbscale, read_runs

STUDY = ("tpcb", "-c", "1,2,3", "-T", "3s")


def _started(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    return subprocess.Popen(
        [sys.executable, "-m", "dbscale", "run", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_mid_study_keeps_every_run_and_resume_finishes(
    tpcb_url: str, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    out = tmp_path / sig.name
    proc = _started(*STUDY, "--target", tpcb_url, "--out", str(out))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the first run is recorded, then into the second
        if (out / "runs.jsonl").is_file() and read_runs(out / "runs.jsonl"):
            break
        time.sleep(0.2)
    time.sleep(1.5)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stdout + stderr
    assert "Traceback" not in stdout + stderr
    assert f"cancelled by {sig.name} during run 2" in stderr, stderr
    assert f"--resume {out}" in stderr
    first, second = read_runs(out / "runs.jsonl")
    assert first["cancelled"] is False and first["clients"] == 1
    assert second["cancelled"] is True and second["transactions"] > 0
    assert (out / "summary.json").is_file() and (out / "report.html").is_file()
    resumed = dbscale("run", *STUDY, "--target", tpcb_url, "--resume", str(out))
    resumed.assert_ok()
    records = read_runs(out / "runs.jsonl")
    assert [(r["clients"], r["cancelled"]) for r in records] == [
        (1, False), (2, True), (2, False), (3, False),
    ]  # fmt: skip


def test_a_torn_last_line_is_set_aside_before_resume_appends(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "torn"
    dbscale("run", "tpcb", "-c", "1,2", "-T", "1s", "--target", tpcb_url, "--out", str(out))
    runs = out / "runs.jsonl"
    whole = runs.read_bytes()
    second = whole[whole.index(b"\n") + 1 :]
    runs.write_bytes(whole[: whole.index(b"\n") + 1] + second[:300])  # a crash mid-write
    resumed = dbscale("run", "tpcb", "-c", "1,2", "-T", "1s", "--target", tpcb_url,
                      "--resume", str(out))  # fmt: skip
    resumed.assert_ok()
    assert "note: runs.jsonl ended in a torn record (300 bytes" in resumed.err, resumed.err
    assert (out / "runs.jsonl.torn").read_bytes() == second[:300] + b"\n"
    records = read_runs(runs)
    assert [r["clients"] for r in records] == [1, 2]  # the torn run made again, nothing glued
    assert runs.read_bytes().endswith(b"}\n") and runs.read_bytes().count(b"\n") == 2
    again = dbscale("run", "tpcb", "-c", "1,2", "-T", "1s", "--target", tpcb_url,
                    "--resume", str(out))  # fmt: skip
    again.assert_ok()
    assert len(read_runs(runs)) == 2  # nothing left to repeat


def test_a_reused_out_directory_is_refused(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "reused"
    dbscale("run", "tpcb", "-c", "1", "-T", "1s", "--target", tpcb_url, "--out", str(out))
    other = dbscale("run", "tpcb-select-only", "-c", "1", "-T", "1s", "--target", tpcb_url,
                    "--out", str(out))  # fmt: skip
    other.assert_user_error()
    assert other.code == EXIT_FAILURE and "already holds the runs of a study" in other.err
    assert "--resume" in other.err.split("hint:")[1]
    assert [r["workload"] for r in read_runs(out / "runs.jsonl")] == ["tpcb"]


def test_a_corrupt_runs_file_is_one_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "corrupt"
    out.mkdir()
    for name, content in (("binary", b"\xff\xfe\x00garbage\n"), ("list", b"[1, 2]\n"),
                          ("text", b"not json at all\n")):  # fmt: skip
        (out / "runs.jsonl").write_bytes(content)
        for command in (("report", str(out)), ("compare", str(out), str(out))):
            done: Outcome = dbscale(*command)
            done.assert_user_error()
            assert done.code == EXIT_FAILURE, (name, command, done.err)
            assert "runs.jsonl, line 1" in done.err, (name, done.err)


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Path:
    """A 96 KiB tmpfs: room for a plan and a run or two, not for a study."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_keeps_every_complete_run_and_says_so(
    tpcb_url: str, small_filesystem: Path
) -> None:
    out = small_filesystem / "results"
    clients = ",".join(str(n) for n in range(1, 13))
    done = dbscale("run", "tpcb", "-c", clients, "-T", "1s", "--target", tpcb_url,
                   "--out", str(out))  # fmt: skip
    done.assert_user_error()
    assert done.code == EXIT_FAILURE, done.text
    assert "No space left on device" in done.err and "is full" in done.err.split("hint:")[1]
    assert "internal error" not in done.err
    assert not list(out.glob(".*.tmp")), "a temporary file was left behind"
    records = read_runs(out / "runs.jsonl")  # every complete line is a whole record
    assert records and all(r["transactions"] > 0 for r in records)
