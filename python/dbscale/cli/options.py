"""Every option of the command line, declared once: `dbscale run`'s flags and those the data
commands share with it. Commands take them as typed parameters; nothing here runs anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dbscale.modes import ConnectMode, QueryProtocol, TlsMode
from dbscale.modes import Routing as RoutingMode
from dbscale.plan import objectives as capacity
from dbscale.run.output_format import OutputFormat

Workload = Annotated[
    list[str] | None,
    typer.Argument(
        help="Workload name (`dbscale workloads`) or a plan file (plan.yaml); or pgbench script "
        "files and built-ins in a weighted mix: script:FILE[@W] ... tpcb@W. Omitted: the demo.",
        show_default=False,
        metavar="[WORKLOAD | PLAN.yaml | script:FILE[@W]...]",
    ),
]
Defines = Annotated[
    list[str] | None,
    typer.Option(
        "--define", "-D",
        help="A script variable every client starts with, name=value (pgbench -D); repeatable.",
        show_default=False,
        metavar="NAME=VALUE",
    ),
]  # fmt: skip
DataWorkload = Annotated[
    str, typer.Argument(help="Workload name (`dbscale workloads`).", metavar="WORKLOAD")
]
Targets = Annotated[
    list[str] | None,
    typer.Option(
        "--target",
        help="postgresql://user[:password]@host[:port]/db, libpq key=value, mysql://..., or "
        "`embedded` (default: a private PostgreSQL dbscale starts); NAME=URL names it, and "
        "repeating the option gives a plan several targets. PGPASSWORD (MYSQL_PWD) fills in a "
        "missing password.",
        show_default=False,
        metavar="[NAME=]URL",
    ),
]
SetPairs = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="key=value, repeatable: a workload parameter (scale=10) or, with a plan, any "
        "plan field (repeat=3, load.duration=10s, targets.main.socket_dir=/tmp).",
        metavar="KEY=VALUE",
    ),
]
Routing = Annotated[
    RoutingMode | None,
    typer.Option(
        "--routing",
        help="How clients use a cluster's nodes: round-robin, affinity (TPC-C warehouse w on "
        "node w mod N), primary (where writes go), prefer-standby, standby, first. Default: "
        "primary on PostgreSQL, affinity for TPC-C on MySQL, else round-robin.",
        show_default=False,
    ),
]
TransactionTimeout = Annotated[
    str | None,
    typer.Option(
        "--transaction-timeout",
        help="The client's own deadline per transaction (e.g. 5s): past it the statement is "
        "cancelled, the session dropped and the transaction failed (a synchronous-replication "
        "wait ignores statement_timeout).",
        metavar="DURATION",
    ),
]
Tls = Annotated[
    TlsMode | None,
    typer.Option(
        "--tls", help="TLS mode, like libpq's sslmode (default: prefer).", show_default=False
    ),
]
Clients = Annotated[
    list[str] | None,
    typer.Option(
        "--clients",
        "-c",
        help="Clients; a comma list (1,4,8) runs one run each. Default 1 (TPC-C: 10 per "
        "warehouse with waits, 1 without; the demo: 1,4,8).",
        metavar="N[,N...]",
    ),
]
Duration = Annotated[
    str | None,
    typer.Option(
        "--duration",
        "-T",
        help="Measured time per run: 30s, 2m, 500ms; a bare number is seconds (default 10s; "
        "plans: 30s).",
        metavar="DURATION",
    ),
]
Ramp = Annotated[
    str | None,
    typer.Option(
        "--ramp",
        help="Unmeasured time before each run; clients start spread over it (5m).",
        metavar="DURATION",
    ),
]
Interval = Annotated[
    str | None,
    typer.Option(
        "--interval",
        "--progress",
        "-P",
        "--report-interval",
        help="Width of the recorded per-interval snapshots and of the progress lines (default "
        "1s); pgbench's -P N and sysbench's --report-interval=N are this, in seconds.",
        metavar="DURATION",
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
    typer.Option(
        "--rate", "-R", help="Open model: target transactions/s over all clients.", metavar="TPS"
    ),
]
Threads = Annotated[
    int | None,
    typer.Option("--threads", "-j", help="Worker threads (default: cores).", metavar="N"),
]
Transactions = Annotated[
    int | None,
    typer.Option(
        "--transactions", "-t",
        help="Transactions per client (pgbench -t); the run ends when all are done and "
        "--duration, if given, is a limit.",
        show_default=False,
        metavar="N",
    ),
]  # fmt: skip
LatencyLimit = Annotated[
    float | None,
    typer.Option(
        "--latency-limit", "-L",
        help="Milliseconds (pgbench -L): slower transactions are counted as over the limit; "
        "with --rate, arrivals already later than it are skipped, never sent.",
        metavar="MS",
    ),
]  # fmt: skip
Log = Annotated[
    bool,
    typer.Option(
        "--log", "-l",
        help="Write each run's per-transaction log in pgbench's format under the results "
        "directory (transactions/); a plan's load.log: true.",
    ),
]  # fmt: skip
SamplingRate = Annotated[
    float | None,
    typer.Option(
        "--sampling-rate",
        help="The share of transactions the log keeps, 0 to 1 (pgbench --sampling-rate).",
        metavar="RATE",
    ),
]
MaxTries = Annotated[
    int | None,
    typer.Option(
        "--max-tries",
        help="Tries per transaction on serialization/deadlock (default 1).",
        metavar="N",
    ),
]
Out = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Results directory (default results/<UTC time>-<workload>).",
        metavar="DIR",
    ),
]
Warmup = Annotated[
    str | None,
    typer.Option(
        "--warmup",
        help="Warm-up run first (recorded, marked warmup); 0: none.",
        metavar="DURATION",
    ),
]
Seed = Annotated[
    int | None, typer.Option("--seed", help="Random seed (default: drawn).", metavar="N")
]
Repeat = Annotated[
    int | None,
    typer.Option(
        "--repeat", help="Measured runs per point (plans: 5; plain runs: 1).", metavar="N"
    ),
]
WarmupRuns = Annotated[
    int | None,
    typer.Option(
        "--warmup-runs",
        help="Warm-up runs before each point's first run (default 0).",
        metavar="N",
    ),
]
Cooldown = Annotated[
    str | None,
    typer.Option("--cooldown", help="Pause between runs: 30s, 2m (default 0).", metavar="DURATION"),
]
KeepGoing = Annotated[
    bool,
    typer.Option(
        "--keep-going",
        help="A failed run is recorded and the study goes on with the other points; the exit "
        "code (6) and a summary of what failed come at the end. A plan's keep_going: true.",
    ),
]
Explain = Annotated[
    bool,
    typer.Option(
        "--explain",
        help="After each run, EXPLAIN (FORMAT JSON) its top statements and keep the plans, so "
        "compare --statements shows a plan that changed. A plan's statements: {explain: true}.",
    ),
]
MetricsAddr = Annotated[
    str | None,
    typer.Option(
        "--metrics-addr",
        help="Serve the study's figures for Prometheus at http://HOST:PORT/metrics while it runs "
        "(OpenMetrics; PORT or :PORT listens on 127.0.0.1 only, another host must be written "
        "out). A plan's live: {metrics: ...}; docs/watching.md.",
        metavar="HOST:PORT",
    ),
]
Web = Annotated[
    str | None,
    typer.Option(
        "--web",
        help="Serve a live page of the study at http://HOST:PORT/ (its progress, each run's "
        "throughput and p99 second by second, nodes, capacity levels; /metrics beside it). No "
        "network needed. A plan's live: {web: ...}.",
        metavar="HOST:PORT",
    ),
]
MetricsLinger = Annotated[
    bool,
    typer.Option(
        "--metrics-linger",
        help="Keep serving the metrics and the live page after the study until Ctrl-C "
        "(default: 15 s, so the last scrape reads the final figures).",
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
    str | None,
    typer.Option("--recipe", help="Run a bundled plan (`dbscale recipes`).", metavar="NAME"),
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
        metavar="HOST:PORT",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Load-generator workers per run (Ray actors with --ray, "
        "else local processes); the clients are split among them.",
        metavar="N",
    ),
]
WorkersPerNode = Annotated[
    int | None,
    typer.Option(
        "--workers-per-node",
        help="With --ray: workers packed on each node (default 1).",
        metavar="N",
    ),
]
Resume = Annotated[
    Path | None,
    typer.Option(
        "--resume", help="Finish an interrupted study in this results directory.", metavar="DIR"
    ),
]
Format = Annotated[
    OutputFormat,
    typer.Option(
        "--output-format",
        help="Plain per-second lines and per-run block shaped like pgbench's or sysbench's "
        "(sysbench's on stdout); auto: the workload family's own, and a live panel on a "
        "terminal; lines: one line per finished run instead of its block.",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print it as JSON.")]

# `dbscale capacity`'s search (a plan's `capacity:` section); defaults from plan/objectives.py.
Slo = Annotated[
    list[str] | None,
    typer.Option(
        "--slo",
        help="A latency objective, repeatable: 'p99<=20ms', 'p99.9<=100ms'. Each gets its own "
        "capacity.",
        metavar="pQ<=LIMIT",
    ),
]
MaxErrors = Annotated[
    str | None,
    typer.Option(
        "--max-errors",
        help="Share of failed transactions a level may have (default "
        f"{capacity.DEFAULT_MAX_ERRORS}).",
        metavar="SHARE",
    ),
]
Knob = Annotated[
    str | None,
    typer.Option(
        "--knob",
        help="rate: the offered rate (open model, at --clients connections); clients: "
        "closed-loop clients; warehouses: TPC-C's active warehouses, whose own pass rule holds "
        "too (tpccbench's search); analytic_streams: CH-benCHmark's analytic streams, up to "
        "--set analytic_streams=N, judged on the terminals' transactions alone. Default "
        f"{capacity.DEFAULT_KNOB}.",
        metavar="rate|clients|warehouses|analytic_streams",
    ),
]
Resolution = Annotated[
    str | None,
    typer.Option(
        "--resolution",
        help=f"How close the bracket closes (default {capacity.DEFAULT_RESOLUTION}).",
        metavar="SHARE",
    ),
]
Settle = Annotated[
    str | None,
    typer.Option(
        "--settle",
        help=f"Unjudged time at the start of each level (default {capacity.DEFAULT_SETTLE}).",
        metavar="DURATION",
    ),
]
Measure = Annotated[
    str | None,
    typer.Option(
        "--measure",
        help="Judged time of a level: SHORTEST..LONGEST (an undecided level is measured "
        f"longer; default {capacity.DEFAULT_MEASURE}).",
        metavar="DURATION[..DURATION]",
    ),
]
Confirm = Annotated[
    int | None,
    typer.Option(
        "--confirm",
        help=f"Extra runs the answer must pass (default {capacity.DEFAULT_CONFIRM}).",
        metavar="N",
    ),
]
CapacityClients = Annotated[
    list[str] | None,
    typer.Option(
        "--clients",
        "-c",
        help=f"Connections the search offers its rates over (default "
        f"{capacity.DEFAULT_RATE_CLIENTS}), or the first count of a --knob clients search "
        "(default 1).",
        metavar="N",
    ),
]


# `dbscale rank` and `dbscale history`: facts and metrics, several per flag (a,b) or repeated.
RANK_METRICS_HELP = (
    "tps, tpmc, tpm, tps_per_vcpu, tpm_per_vcpu, tpmc_per_vcpu, p50_ms..p999_ms, errors_pct, "
    "cost_per_tpm[_reserved], capacity, capacity_per_vcpu, cost_per_capacity, micro.<figure>, "
    "or stmt:<fingerprint>.<figure> (a statement's mean_ms, ms_per_txn, calls_per_txn or a "
    "counter per call)."
)
BY_HELP = (
    "Required: the facts that make a configuration: target, instance_type, vcpus, nodes, "
    "storage_type, "
    "engine_version, a point axis or parameter."
)
ALLOW_HELP = "Facts of what was run that may differ (e.g. warehouses scaled with the machine)."
RankMetric = Annotated[str, typer.Option("--metric", help=RANK_METRICS_HELP, metavar="METRIC")]
ByFacts = Annotated[list[str] | None, typer.Option("--by", metavar="FACT[,FACT]", help=BY_HELP)]
AllowFacts = Annotated[
    list[str] | None, typer.Option("--allow", metavar="FACT[,FACT]", help=ALLOW_HELP)
]
WhereFacts = Annotated[
    list[str] | None,
    typer.Option("--where", help="Only runs with this fact.", metavar="FACT=VALUE"),
]
Labels = Annotated[
    list[str] | None,
    typer.Option("--label", metavar="NAME=VALUE",
                 help="What changed: version=16.4, commit=abc123 (repeatable)."),
]  # fmt: skip
HistoryMetrics = Annotated[
    list[str] | None,
    typer.Option("--metric", metavar="M[,M]",
                 help="Metrics (default: tps, p99_ms, tpmc, capacity); stmt:<fingerprint>.mean_ms "
                      "for one statement, stmt:* for every statement's."),
]  # fmt: skip
