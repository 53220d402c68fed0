"""sysbench's command line as dbscale sysbench reads it: sysbench's defaults, both option
spellings, the connection options as a URL, the test's own options as parameters, and each
option without a dbscale equivalent refused by name."""

from __future__ import annotations

import pytest

from dbscale.cli.sysbench_args import parse_sysbench
from dbscale.errors import ConfigError


def test_sysbenchs_defaults() -> None:
    call = parse_sysbench(["oltp_read_write", "run"], {})
    assert call.command == "run" and call.workload == "sysbench:oltp_read_write"
    assert call.url == "mysql://sbtest@localhost:3306/sbtest"
    assert (call.clients, call.duration_s, call.transactions) == (1, 10, None)
    assert call.protocol == "prepared" and call.params == ()


def test_run_and_connection_options() -> None:
    call = parse_sysbench(["/usr/share/sysbench/oltp_point_select.lua", "--threads=8", "--time",
                           "60", "--report-interval=1", "--rate=500", "--db-ps-mode=disable",
                           "--mysql-host=db1", "--mysql-port=3307", "--mysql-user=u",
                           "--mysql-password=p@ss", "--mysql-db=bench", "--mysql-ssl=on",
                           "--tables=4", "--table_size=100000", "--skip-trx", "run"],
                          {})  # fmt: skip
    assert call.workload == "sysbench:oltp_point_select" and call.clients == 8
    assert (call.duration_s, call.interval_s, call.rate) == (60, 1, 500.0)
    assert call.protocol == "simple" and call.tls == "require"
    assert call.url == "mysql://u:p%40ss@db1:3307/bench"
    assert call.params == ("tables=4", "table_size=100000", "skip_trx=on")
    assert call.param("tables", 1) == 4
    assert call.flag("skip_trx", False) and call.flag("create_secondary", True)
    off = parse_sysbench(["oltp_read_write", "--create_secondary=off", "prepare"], {})
    assert not off.flag("create_secondary", True)


def test_pgsql_and_events() -> None:
    call = parse_sysbench(["oltp_insert", "--db-driver=pgsql", "--pgsql-host=h", "--threads=4",
                           "--events=400", "--time=0", "run"],
                          {"PGSSLMODE": "disable"})  # fmt: skip
    assert call.url == "postgresql://sbtest@h:5432/sbtest" and call.tls == "disable"
    assert (call.transactions, call.duration_s) == (100, None)
    with pytest.raises(ConfigError, match="do not divide evenly"):
        parse_sysbench(["oltp_insert", "--threads=4", "--events=10", "run"], {})


@pytest.mark.parametrize("option", ["--percentile=99", "--histogram", "--mysql-ignore-errors=all",
                                    "--forced-shutdown=1", "--mysql-compression=on"])  # fmt: skip
def test_options_without_an_equivalent_are_refused_by_name(option: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_sysbench(["oltp_read_write", option, "run"], {})
    assert f"does not take {option.split('=')[0]}" in caught.value.message, caught.value.message
    assert parse_sysbench(["oltp_read_write", "--percentile=95", "run"], {}).params == ()


def test_a_test_and_a_command_are_needed() -> None:
    for argv in (["run"], ["oltp_read_write"], ["oltp_read_write", "go"]):
        with pytest.raises(ConfigError, match="a test and a command"):
            parse_sysbench(argv, {})
