"""pgbench's command line as dbscale pgbench reads it: pgbench's defaults, grouped and glued
short options, long ones, the built-ins and files as a mix, PG* variables, and each option
without a dbscale equivalent refused by name."""

from __future__ import annotations

import pytest

from dbscale.cli.pgbench_args import parse_pgbench
from dbscale.errors import ConfigError

ENV = {"PGHOST": "db1", "PGPORT": "6432", "PGUSER": "bench"}


def test_pgbenchs_defaults_ten_transactions_one_client_simple_protocol() -> None:
    call = parse_pgbench([], ENV)
    assert not call.init and call.scripts == ("tpcb",)
    assert (call.clients, call.threads, call.transactions, call.duration_s) == (1, 1, 10, None)
    assert call.protocol == "simple" and not call.per_transaction_connect
    assert call.conninfo == "host=db1 port=6432 user=bench dbname=bench"


def test_options_as_pgbench_spells_them() -> None:
    call = parse_pgbench(["-c10", "-j", "2", "--time=60", "-nS", "-M", "prepared", "-C",
                          "-P", "5", "-R", "500", "-L", "20", "-h", "x", "mydb"], ENV)  # fmt: skip
    assert call.scripts == ("tpcb-select-only",) and call.clients == 10 and call.threads == 2
    assert call.duration_s == 60 and call.transactions is None and call.per_transaction_connect
    assert (call.progress_s, call.rate, call.latency_limit_ms) == (5.0, 500.0, 20.0)
    assert call.conninfo == "host=x port=6432 user=bench dbname=mydb"
    assert parse_pgbench(["-c", "2", "-j", "8"], ENV).threads == 2  # never more than clients


def test_builtins_and_files_make_a_weighted_mix() -> None:
    call = parse_pgbench(["-b", "se@2", "-b", "simple", "-f", "mine.sql@3"], ENV)
    assert call.scripts == ("select-only@2", "simple-update@1", "script:mine.sql@3")
    assert parse_pgbench(["-N"], ENV).scripts == ("tpcb-simple-update",)
    assert parse_pgbench(["-b", "tpcb-like"], ENV).scripts == ("tpcb",)
    with pytest.raises(ConfigError, match="ambiguous"):
        parse_pgbench(["-b", "s"], ENV)  # select-only or simple-update


def test_init_and_the_scale() -> None:
    call = parse_pgbench(["-i", "-s", "50", "bench"], {})
    assert call.init and call.scale == 50 and call.conninfo.endswith("dbname=bench")
    run = parse_pgbench(["-s", "5", "-T", "1"], ENV)  # ignored by built-ins, as pgbench says
    assert run.notes and "scale option ignored" in run.notes[0]
    custom = parse_pgbench(["-s", "5", "-f", "x.sql"], ENV)
    assert "scale=5" in custom.defines


def test_per_command_latencies_run_a_builtin_as_its_script() -> None:
    # -r times each command: the built-in then runs through the script interpreter
    assert parse_pgbench(["-nr"], ENV).scripts == ("tpcb-like@1",)
    assert parse_pgbench(["-S", "--report-per-command"], ENV).scripts == ("select-only@1",)
    assert parse_pgbench(["-rc4", "-f", "x.sql"], ENV).clients == 4


@pytest.mark.parametrize("argv", [["-nv"], ["--foreign-keys"], ["-I", "dtg"],
                                  ["--aggregate-interval=10"], ["-v"]])  # fmt: skip
def test_options_without_an_equivalent_are_refused_by_name(argv: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_pgbench(argv, ENV)
    name = {"-nv": "-v"}.get(argv[0], argv[0].split("=")[0])
    assert f"does not take {name}:" in caught.value.message, caught.value.message


def test_bad_values_are_one_error() -> None:
    for argv in (["-c", "0"], ["-T", "1", "-t", "5"], ["-M", "binary"], ["--random-seed", "x"]):
        with pytest.raises(ConfigError):
            parse_pgbench(argv, ENV)
