"""Command-line failures that happen before any native call or connection: each prints one
`error:` line and one `hint:` line on stderr, exits non-zero, and shows no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.cli.app import flag_words, run_cli
from dbscale.cli.commands import LIST_WIDTH
from dbscale.errors import EXIT_OK, EXIT_USAGE

DEAD = "postgresql://u@127.0.0.1:1/x"  # nothing listens on port 1


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run_cli(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "error", "hint"),
    [
        (["-S"], "pgbench's built-in select-only script", "dbscale run tpcb-select-only"),
        (["-N"], "simple-update", "tpcb-simple-update"),
        (["-s", "10"], "pgbench's scale factor", "--set scale=N"),
        (["-C"], "connection per transaction", "--connect per-transaction"),
        (["-r"], "per-statement latencies", "script:FILE"),
        (["-n"], "no-vacuum", "never vacuums"),
        (["-f", "x.sql"], "custom script file", "script:FILE"),
        (["-b", "select-only"], "built-in script choice", "tpcb-select-only"),
        (["--time", "10"], "sysbench's run time", "-T/--duration"),  # never "--rate"
        (["--mysql-host=db"], "sysbench MySQL connection option", "--target mysql://"),
        (["--table-size", "10"], "rows per table", "--set table_size=N"),
    ],
)
def test_the_peers_flags_are_answered_with_their_equivalent(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str, hint: str
) -> None:
    code, _, err = run(capsys, "run", "tpcb", "--target", DEAD, *argv)
    assert code == EXIT_USAGE, err
    first, second = err.strip().splitlines()
    assert first.startswith(f"error: dbscale run has no {argv[0].split('=')[0]}: "), err
    assert error in first and second.startswith("hint: ") and hint in second, err
    assert "--rate" not in err


def test_sysbench_threads_without_clients_is_refused_naming_both_meanings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "sysbench:oltp_read_write", "--target", DEAD, "--dry-run"]
    code, _, err = run(capsys, *argv, "--threads=4")
    assert code == EXIT_USAGE, err
    assert "--threads 4 with 1 client" in err and "give -c 4" in err, err
    code, _, err = run(capsys, *argv, "--threads=4", "-c", "8")
    assert code == EXIT_OK, err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "tpcb", "-c", "0"], "--clients must be at least 1"),
        (["run", "tpcb", "--clients", "1,x"], "'x' is not a whole number"),
        (["run", "tpcb", "-T", "10x"], "--duration"),
        (["run", "tpcb", "--warmup", "-1s"], "--warmup"),
        (["run", "tpcb", "--set", "scale"], "--set 'scale' is not key=value"),
        (["run", "tpcb", "--target", "mongodb://root@db/x"], "scheme 'mongodb'"),
        (["run", "tpcb", "--target", "postgresql://db:port/x"], "malformed"),
        (["run", "tpcb", "--tls", "sometimes"], "--tls"),
        (["run", "tpcb", "--protocol", "binary"], "--protocol"),
        (["run", "tpcb", "--threads", "0"], "--threads: must be at least 1"),
        (["run", "tpcb", "--threads", "many"], "--threads"),
        (["run", "tpcb", "--rate", "-1"], "--rate"),
        (["run", "tpcb", "--max-tries", "0"], "--max-tries"),
        (["run", "tpcb", "--seed", "-3"], "--seed"),
        (["run", "tpcb", "--bogus"], "--bogus"),
        (["prepare", "tpcb", "--set", "=1"], "--set"),
        # Values the core refuses, refused before the (unreachable) target is tried.
        (["run", "tpcc", "--set", "warehouses=0", "--target", DEAD], "warehouses must be"),
        (["prepare", "tpcc", "--set", "warehouses=0", "--target", DEAD], "warehouses must be"),
        (["run", "oltp_point_select", "--set", "rand_type=normal", "--target", DEAD], "rand_type"),
        (["prepare"], "WORKLOAD"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_input_is_one_error_and_a_hint(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == EXIT_USAGE, err
    lines = err.strip().splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("error: ")
    assert needle.lower() in lines[0].lower()
    assert lines[1].startswith("hint: ")
    assert "Traceback" not in out + err


def test_password_is_not_echoed_in_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "tpcb", "--target", "postgresql://u:s3cret@db:port/x")
    assert code == EXIT_USAGE
    assert "s3cret" not in err


def test_help_and_no_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == EXIT_OK
    assert "run" in out and "prepare" in out and "workloads" in out
    code, out, _ = run(capsys)
    assert code == EXIT_OK
    assert "Usage" in out
    code, out, _ = run(capsys, "run", "--help")
    assert code == EXIT_OK
    assert "--clients" in out
    # -h as most command-line tools take it, on every command.
    for argv in (("-h",), ("run", "-h"), ("micro", "net", "-h")):
        code, out, _ = run(capsys, *argv)
        assert code == EXIT_OK and "Usage" in out, argv


def test_version_works_without_the_native_module(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "version")
    assert code == EXIT_OK
    assert out.startswith("dbscale ")
    assert "dbscale._core" in out


def test_help_shows_metavars_and_defaults_not_python_types(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "run", "--help")
    assert code == EXIT_OK
    assert "list[str]" not in out and "<bool>" not in out and "<int>" not in out, out
    assert "--target [NAME=]URL" in out
    assert "-c, --clients N[,N...]" in out
    words = " ".join(out.split())
    assert "(default 10s; plans: 30s)" in words  # -T
    assert "Default 1 (TPC-C: 10 per warehouse" in words  # -c
    assert "-P, --interval, --progress, --report-interval DURATION" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--check=false"], ["run"]),
        (["run", "--check=TRUE", "--keep-going=no"], ["run", "--check"]),
        (["run", "--json=1", "--quick=off", "--dry-run=yes"], ["run", "--json", "--dry-run"]),
        (["run", "--check=maybe"], ["run", "--check=maybe"]),  # the parser refuses it
        (["run", "--seed=1"], ["run", "--seed=1"]),  # not an on/off flag
        (["run", "--", "--check=false"], ["run", "--", "--check=false"]),
    ],
)
def test_on_off_flags_take_true_and_false(argv: list[str], expected: list[str]) -> None:
    assert flag_words(argv) == expected


def test_check_false_and_pgbench_and_sysbench_progress_flags_are_taken(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for flags in (["--check=false", "-P", "5"], ["--report-interval=10"], ["--progress", "2s"]):
        code, _, err = run(
            capsys, "run", "tpcb", "-T", "20", "--dry-run", "-o", str(tmp_path / "r"), *flags
        )
        assert code == EXIT_OK, err
        assert "error" not in err
    code, _, err = run(capsys, "run", "tpcb", "--check=maybe", "--dry-run")
    assert code == EXIT_USAGE and "--check" in err


def test_workload_list_fits_the_width_it_is_given(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for columns, widest in (("70", 70), (None, LIST_WIDTH)):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        code, out, _ = run(capsys, "workloads")
        assert code == EXIT_OK
        assert "tpcc" in out
        assert max(len(line.rstrip()) for line in out.splitlines()) <= widest, out
