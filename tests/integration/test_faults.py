"""Nothing measured is lost or mixed, under faults: SIGTERM and SIGHUP mid-study, a torn last
line of runs.jsonl, a reused --out, and a results directory on a full filesystem. Each test
checks the exit code, what runs.jsonl holds, and that --resume finishes the study."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dbscale.errors import EXIT_FAILURE, EXIT_RUN
from dbscale.targets.local.postgres import LocalPostgres
from tests.conftest import REPO, PgTestServer, skip_or_fail
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
    # The error names the write that failed first and the run that is kept.
    [error] = [x for x in done.err.splitlines() if x.startswith("error: ")]
    kept = "is kept in runs.jsonl, and the study stopped" in error
    assert kept or "was measured, but its record could not be written" in error, done.err
    assert "targets/" not in error
    assert "internal error" not in done.err
    assert not list(out.glob(".*.tmp")), "a temporary file was left behind"
    records = read_runs(out / "runs.jsonl")  # every complete line is a whole record
    assert records and all(r["transactions"] > 0 for r in records)


def test_a_run_whose_record_cannot_be_written_is_named_and_kept_on_stdout(
    live: PgTestServer, small_filesystem: Path, tmp_path: Path
) -> None:
    # The script's first transaction fills the results' filesystem: run 1 is measured, then
    # cannot be appended. The error says which run and why; its record goes to stdout.
    filler = small_filesystem / "filler"
    script = tmp_path / "fill.sql"
    script.write_text(
        f"\\shell sh -c 'test -e {filler} || dd if=/dev/zero of={filler} bs=4096 "
        "2>/dev/null; true'\nSELECT 1;\n"
    )
    out = small_filesystem / "results"
    done = dbscale("run", f"script:{script}", "-t", "3", "--target", live.url_for("postgres"),
                   "--out", str(out))  # fmt: skip
    done.assert_user_error()
    assert done.code == EXIT_FAILURE, done.text
    [error] = [x for x in done.err.splitlines() if x.startswith("error: ")]
    assert "run 1 (" in error and "was measured, but its record could not be written" in error
    assert "runs.jsonl: No space left on device" in error
    assert "targets/" not in error  # a later failure does not take the first one's place
    [line] = [x for x in done.out.splitlines() if x.startswith('{"workload"')]
    assert json.loads(line)["transactions"] == 3


def _test_postgres() -> LocalPostgres:
    """The session's test PostgreSQL, to stop and start it (scripts/test-servers.sh made it)."""
    directory, port = os.environ.get("DBSCALE_TEST_PG_DIR"), os.environ.get("DBSCALE_TEST_PG_PORT")
    if not directory or not port:
        skip_or_fail("no test PostgreSQL directory (DBSCALE_TEST_PG_DIR): run `make test`")
    return LocalPostgres(Path(str(directory)), port=int(str(port)))


def _run_with(fault: Callable[[], None], *args: str) -> subprocess.CompletedProcess[str]:
    """`dbscale run ARGS` with `fault` done 2 s into it; the finished process."""
    proc = _started(*args)
    time.sleep(2.5)  # connected, and a second or more measured
    fault()
    stdout, stderr = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_a_server_restart_mid_run_is_an_outage_kept_out_of_the_statistics(
    tpcb_url: str, tmp_path: Path
) -> None:
    server = _test_postgres()

    def restart() -> None:
        server.stop()
        time.sleep(3)
        server.start()

    out = tmp_path / "restart"
    done = _run_with(restart, "tpcb", "-c", "4", "-T", "9s", "--target", tpcb_url,
                        "--out", str(out))  # fmt: skip
    assert done.returncode == EXIT_RUN, done.stdout + done.stderr
    assert "1 of 1 runs had an outage: no transaction completed for" in done.stderr
    assert "outage: outage:" not in done.stdout + done.stderr  # the status is said once
    [record] = read_runs(out / "runs.jsonl")
    assert record["verdict"]["status"] == "outage"
    [outage] = record["outages"]
    assert 2.0 <= outage["length_s"] <= 6.0 and outage["errors"] > 0, outage
    assert record["transactions"] > 0  # it ran before and after
    [gap] = record["observe"]["gaps"]  # the observer's session lost, then found again
    assert gap["to_s"] is not None and gap["to_s"] > gap["from_s"], gap
    assert "server statistics missing for" in record["observe"]["limited_by"]["evidence"]
    summary = json.loads((out / "summary.json").read_text())
    [point] = summary["points"]
    assert point["runs"] == 0 and "1 outage run(s) left out" in point["flags"]


def test_terminated_backends_are_errors_the_run_rides_through(
    live: PgTestServer, tpcb_url: str, tmp_path: Path
) -> None:
    dbname = tpcb_url.rsplit("/", 1)[1]

    def terminate() -> None:
        live.psql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
                  f"'{dbname}' AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
                  "AND application_name NOT LIKE 'dbscale-observe%'")  # fmt: skip

    out = tmp_path / "terminated"
    done = _run_with(terminate, "tpcb", "-c", "4", "-T", "5s", "--target", tpcb_url,
                        "--out", str(out))  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    assert record["errors"]["by_class"].get("connection_lost", 0) >= 1, record["errors"]
    assert record["verdict"]["status"] in ("errors", "outage"), record["verdict"]
    after = [i for i in record["intervals"] if i["t_s"] >= 4.0]
    assert after and all(i["transactions"] > 0 for i in after)  # reconnected and went on
    assert done.returncode in (0, EXIT_RUN)


def test_a_held_lock_that_stops_every_client_is_a_stall(
    live: PgTestServer, tpcb_url: str, tmp_path: Path
) -> None:
    dbname = tpcb_url.rsplit("/", 1)[1]
    holder: list[subprocess.Popen[str]] = []

    def hold() -> None:
        holder.append(subprocess.Popen(
            ["psql", "-X", "-q", "-d", live.url_for(dbname), "-c",
             "BEGIN; LOCK TABLE pgbench_branches IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(4); "
             "COMMIT;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ))  # fmt: skip

    out = tmp_path / "locked"
    # Held 4 s: on a busy machine psql itself takes a moment to start and connect, and the
    # stall still has to outlast the 2 s a gap needs to count.
    done = _run_with(hold, "tpcb", "-c", "4", "-T", "9s", "--target", tpcb_url,
                        "--out", str(out))  # fmt: skip
    holder[0].wait(timeout=30)
    # The server was up and held every client on its lock: a stall, not an outage. The run
    # keeps its verdict, counts in the statistics, and is flagged.
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = read_runs(out / "runs.jsonl")
    assert "outages" not in record
    [stall] = record["stalls"]
    assert stall["errors"] == 0 and 2.0 <= stall["length_s"] <= 5.0, stall
    assert record["verdict"]["status"] == "ok", record["verdict"]
    assert "warning: " in done.stdout and "stalled: no transaction completed for" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["points"][0]["runs"] == 1  # counted


def test_a_long_load_stops_at_once_on_a_signal(live: PgTestServer) -> None:
    # The load is native code; the command still ends within a second of Ctrl-C, and says the
    # tables are partly loaded.
    url = live.fresh_database("dbscale_interrupted_load")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "prepare", "tpcc", "--target", url, "--set",
         "warehouses=40"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while "preparing" not in live.psql(
            "SELECT 'preparing' FROM pg_stat_activity WHERE "
            "datname = 'dbscale_interrupted_load' LIMIT 1"
        ):
            assert time.monotonic() < deadline, "the load never started"
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - signalled
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert took < 2.0, took
    assert "cancelled: prepare of tpcc cancelled by Ctrl-C: its tables are partly loaded" in stderr
    assert "Traceback" not in stderr
