"""Every option of the command line, declared once: `dbscale run`'s flags and those the data
commands share with it. Commands take them as typed parameters; nothing here runs anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dbscale.modes import ConnectMode, QueryProtocol, TlsMode
from dbscale.run.output_format import OutputFormat

Workload = Annotated[
    list[str] | None,
    typer.Argument(
        help="Workload name (`dbscale workloads`) or a plan file (plan.yaml); or pgbench script "
        "files and built-ins in a weighted mix: script:FILE[@W] ... tpcb@W. Omitted: the demo.",
        show_default=False,
    ),
]
Defines = Annotated[
    list[str] | None,
    typer.Option(
        "--define", "-D",
        help="A script variable every client starts with, name=value (pgbench -D); repeatable.",
        show_default=False,
    ),
]  # fmt: skip
DataWorkload = Annotated[str, typer.Argument(help="Workload name (`dbscale workloads`).")]
Targets = Annotated[
    list[str] | None,
    typer.Option(
        "--target",
        help="postgresql://user[:password]@host[:port]/db, libpq key=value, mysql://..., or "
        "`embedded` (default: a private PostgreSQL dbscale starts); NAME=URL names it, and "
        "repeating the option gives a plan several targets. PGPASSWORD (MYSQL_PWD) fills in a "
        "missing password.",
        show_default=False,
    ),
]
SetPairs = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="key=value, repeatable: a workload parameter (scale=10) or, with a plan, any "
        "plan field (repeat=3, load.duration=10s, targets.main.socket_dir=/tmp).",
    ),
]
Tls = Annotated[
    TlsMode | None,
    typer.Option("--tls", help="TLS mode, like libpq's sslmode.", show_default=False),
]
Clients = Annotated[
    list[str] | None,
    typer.Option("--clients", "-c", help="Clients; a comma list (1,4,8) runs one run each."),
]
Duration = Annotated[
    str | None, typer.Option("--duration", "-T", help="Measured time per run: 30s, 2m, 500ms.")
]
Ramp = Annotated[
    str | None,
    typer.Option(
        "--ramp", help="Unmeasured time before each run; clients start spread over it (5m)."
    ),
]
Interval = Annotated[
    str | None,
    typer.Option(
        "--interval", help="Width of the recorded per-interval snapshots and progress (1s)."
    ),
]
Protocol = Annotated[
    QueryProtocol | None, typer.Option("--protocol", "-M", help="Query protocol (pgbench -M).")
]
Connect = Annotated[
    ConnectMode | None,
    typer.Option("--connect", help="per-transaction reconnects for each transaction (-C)."),
]
Rate = Annotated[
    float | None,
    typer.Option("--rate", "-R", help="Open model: target transactions/s over all clients."),
]
Threads = Annotated[
    int | None, typer.Option("--threads", "-j", help="Worker threads (default: cores).")
]
Transactions = Annotated[
    int | None,
    typer.Option(
        "--transactions", "-t",
        help="Transactions per client (pgbench -t); the run ends when all are done and "
        "--duration, if given, is a limit.",
        show_default=False,
    ),
]  # fmt: skip
MaxTries = Annotated[
    int | None,
    typer.Option("--max-tries", help="Tries per transaction on serialization/deadlock."),
]
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Results directory (default results/<UTC time>-<workload>)."),
]
Warmup = Annotated[
    str | None,
    typer.Option("--warmup", help="Warm-up run first (recorded, marked warmup); 0: none."),
]
Seed = Annotated[int | None, typer.Option("--seed", help="Random seed (default: drawn).")]
Repeat = Annotated[
    int | None,
    typer.Option("--repeat", help="Measured runs per point (plans: 5; plain runs: 1)."),
]
WarmupRuns = Annotated[
    int | None,
    typer.Option("--warmup-runs", help="Warm-up runs before each point's first run."),
]
Cooldown = Annotated[str | None, typer.Option("--cooldown", help="Pause between runs: 30s, 2m.")]
KeepGoing = Annotated[
    bool,
    typer.Option(
        "--keep-going",
        help="A failed run is recorded and the study goes on with the other points; the exit "
        "code (6) and a summary of what failed come at the end. A plan's keep_going: true.",
    ),
]
CheckAfterRuns = Annotated[
    bool,
    typer.Option(
        "--check",
        help="After each run, check the data's consistency conditions (tpcc); a failure stops "
        "the study (exit 7). A plan's prepare.check: run.",
    ),
]
Recipe = Annotated[
    str | None, typer.Option("--recipe", help="Run a bundled plan (`dbscale recipes`).")
]
Quick = Annotated[bool, typer.Option("--quick", help="The recipe's few-minute variant.")]
DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Print the points, runs and estimated time; run nothing."),
]
Ray = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="Spread each run's clients over workers of this Ray cluster "
        "(HOST:PORT of its head; needs dbscale[ray]).",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Load-generator workers per run (Ray actors with --ray, "
        "else local processes); the clients are split among them.",
    ),
]
WorkersPerNode = Annotated[
    int | None,
    typer.Option("--workers-per-node", help="With --ray: workers packed on each node (default 1)."),
]
Resume = Annotated[
    Path | None,
    typer.Option("--resume", help="Finish an interrupted study in this results directory."),
]
Format = Annotated[
    OutputFormat,
    typer.Option(
        "--output-format",
        help="Plain per-second lines and per-run block shaped like pgbench's or sysbench's "
        "(sysbench's on stdout); auto: the workload family's own, and a live panel on a "
        "terminal.",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print it as JSON.")]
