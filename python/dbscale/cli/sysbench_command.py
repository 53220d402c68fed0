"""`dbscale sysbench TEST [options] prepare|run|cleanup` does what sysbench's command line asks
(cli/sysbench_args.py reads it): prepare and cleanup print sysbench's lines for each table, a run
is an ordinary recorded dbscale study printed in sysbench's shape, so a script that called
sysbench keeps working and gains the record, the statistics and the report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from dbscale.cli.consoles import data_console
from dbscale.cli.sysbench_args import SysbenchCall, parse_sysbench
from dbscale.modes import QueryProtocol, TlsMode
from dbscale.run.output_format import OutputFormat

SYSBENCH_DEFAULT_TABLES = 1
SYSBENCH_DEFAULT_TABLE_SIZE = 10_000


def sysbench(argv: Sequence[str], *, env: Mapping[str, str], now: datetime) -> None:
    call = parse_sysbench(argv, env)
    if call.command == "run":
        _run(call, env, now)
    else:
        _data(call, env)


def _data(call: SysbenchCall, env: Mapping[str, str]) -> None:
    """prepare or cleanup, then sysbench's lines for each table."""
    from dbscale.cli import commands

    plan = commands.plan_data(call.workload, targets=[call.url], set_params=list(call.params),
                              tls=TlsMode(call.tls) if call.tls else None, env=env)  # fmt: skip
    commands.data_step(call.command, plan)
    out = data_console()
    tables = call.param("tables", SYSBENCH_DEFAULT_TABLES)
    size = call.param("table_size", SYSBENCH_DEFAULT_TABLE_SIZE)
    for t in range(1, tables + 1):
        if call.command == "cleanup":
            out.print(f"Dropping table 'sbtest{t}'...", highlight=False)
            continue
        out.print(f"Creating table 'sbtest{t}'...", highlight=False)
        out.print(f"Inserting {size} records into 'sbtest{t}'", highlight=False)
        if call.flag("create_secondary", True):  # sysbench's default: on
            out.print(f"Creating a secondary index on 'sbtest{t}'...", highlight=False)


def _run(call: SysbenchCall, env: Mapping[str, str], now: datetime) -> None:
    from dbscale.cli import commands
    from dbscale.plan.build import RunOptions

    options = RunOptions(
        workload=call.workload, target=[call.url], clients=[str(call.clients)],
        duration=f"{call.duration_s}s" if call.duration_s else None,
        transactions=call.transactions, rate=call.rate,
        interval=f"{call.interval_s}s" if call.interval_s else None,
        warmup=f"{call.warmup_s}s" if call.warmup_s else None, seed=call.seed,
        protocol=QueryProtocol(call.protocol), tls=TlsMode(call.tls) if call.tls else None,
        set_params=list(call.params), out=Path(call.out) if call.out else None,
    )  # fmt: skip
    commands.run(options, env=env, now=now, dry_run=False, output_format=OutputFormat.SYSBENCH)
