"""`dbscale pgbench ...` runs what pgbench's command line asks (cli/pgbench_args.py reads it):
`-i` loads TPC-B and prints pgbench's init lines; a run is an ordinary recorded dbscale study
printed in pgbench's shape, so a script that called pgbench keeps working and gains the record,
the statistics and the report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from dbscale import interrupts
from dbscale.cli.consoles import data_console, message_console
from dbscale.cli.pgbench_args import PgbenchCall, parse_pgbench
from dbscale.errors import Cancelled, ConfigError
from dbscale.modes import ConnectMode, QueryProtocol, TlsMode
from dbscale.run.output_format import OutputFormat

# dbscale's load steps as pgbench -i names them.
INIT_STEPS = {"drop tables": "drop tables", "create tables": "create tables",
              "generate data": "client-side generate", "vacuum": "vacuum",
              "primary keys": "primary keys"}  # fmt: skip
TLS_OF_SSLMODE = {"disable": "disable", "allow": "prefer", "prefer": "prefer",
                  "require": "require", "verify-ca": "verify-ca",
                  "verify-full": "verify-full"}  # fmt: skip


def pgbench(argv: Sequence[str], *, env: Mapping[str, str], now: datetime) -> None:
    call = parse_pgbench(argv, env)
    err = message_console()
    for note in call.notes:
        err.print(note, highlight=False)
    if call.init:
        _initialize(call, env)
    else:
        _run(call, env, now)


def _tls(call: PgbenchCall) -> TlsMode | None:
    if call.tls is None:
        return None
    mode = TLS_OF_SSLMODE.get(call.tls)
    if mode is None:
        raise ConfigError(f"PGSSLMODE={call.tls} is not an sslmode",
                          "disable, allow, prefer, require, verify-ca or verify-full")  # fmt: skip
    return TlsMode(mode)


def _initialize(call: PgbenchCall, env: Mapping[str, str]) -> None:
    """pgbench -i: TPC-B's tables at the scale, printed as pgbench prints its steps."""
    from dbscale import core
    from dbscale.cli.commands import plan_data
    from dbscale.targets import open_target

    plan = plan_data("tpcb", targets=[call.conninfo], set_params=[f"scale={call.scale}"],
                     tls=_tls(call), env=env)  # fmt: skip
    err, out = message_console(), data_console()
    for line in (
        "dropping old tables...",
        "creating tables...",
        "generating data (client-side)...",
        "vacuuming...",
        "creating primary keys...",
    ):
        err.print(line, highlight=False)
    with open_target(plan.target) as target:
        try:
            summary = core.prepare(plan.config(target.url))
        except KeyboardInterrupt:
            raise Cancelled(
                f"pgbench -i cancelled by {interrupts.cause()}: the tables are partly loaded",
                "run it again: it loads them whole",
            ) from None
    steps = ", ".join(f"{INIT_STEPS.get(s.name, s.name)} {s.seconds:.2f} s" for s in summary.steps)
    total = summary.seconds if summary.seconds is not None else 0.0
    out.print(f"done in {total:.2f} s ({steps}).", highlight=False)


def _run(call: PgbenchCall, env: Mapping[str, str], now: datetime) -> None:
    """A pgbench run as a dbscale study, printed in pgbench's shape."""
    from dbscale.cli import commands
    from dbscale.plan.build import RunOptions

    scripts = call.scripts
    options = RunOptions(
        workload=scripts[0] if len(scripts) == 1 else list(scripts),
        target=[call.conninfo], clients=[str(call.clients)], threads=call.threads,
        duration=f"{call.duration_s}s" if call.duration_s is not None else None,
        transactions=call.transactions, protocol=QueryProtocol(call.protocol),
        connect=ConnectMode.PER_TRANSACTION if call.per_transaction_connect else None,
        interval=f"{call.progress_s:g}s" if call.progress_s else None, rate=call.rate,
        latency_limit=call.latency_limit_ms, log=call.log, sampling_rate=call.sampling_rate,
        defines=list(call.defines), seed=call.seed, max_tries=call.max_tries, tls=_tls(call),
        out=Path(call.out) if call.out else None,
    )  # fmt: skip
    commands.run(options, env=env, now=now, dry_run=False, output_format=OutputFormat.PGBENCH)
