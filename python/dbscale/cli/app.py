"""The `dbscale` command line: parse options, hand them to `commands`, turn every failure into an
`error:` line and a `hint:` line with a meaningful exit code, never a traceback.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from dbscale import interrupts
from dbscale.cli import ci_options as ci
from dbscale.cli import commands, export_command, history_command, micro_app, rank_command
from dbscale.cli import options as o
from dbscale.cli.peer_flags import peer_flag
from dbscale.errors import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, Cancelled, ConfigError, DbscaleError
from dbscale.run.output_format import OutputFormat

LIST_FLAGS = ("clients", "set_params", "defines", "threshold")


def _argument_type(self: typer.core.TyperArgument, ctx: object) -> str | None:
    """An argument's help shows its metavar alone, not typer's Python type (`<list[str]>`)."""
    return None if self.metavar else _typer_argument_type(self, ctx)  # type: ignore[arg-type]


_typer_argument_type = typer.core.TyperArgument.display_type_rich
typer.core.TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign,assignment]

app = typer.Typer(
    name="dbscale",
    help="Database benchmarking with honest statistics. `dbscale run` alone runs a demo.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    rich_markup_mode=None,  # click's plain help: metavars, not Python types, and no boxes
)


def _print_version(wanted: bool) -> None:
    if wanted:
        commands.version()
        raise typer.Exit(EXIT_OK)


@app.callback()
def main_options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print dbscale's version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Database benchmarking with honest statistics. `dbscale run` alone runs a demo."""


@app.command("run")
def run_cmd(
    workload: o.Workload = None,
    target: o.Targets = None,
    clients: o.Clients = None,
    duration: o.Duration = None,
    ramp: o.Ramp = None,
    interval: o.Interval = None,
    protocol: o.Protocol = None,
    connect: o.Connect = None,
    rate: o.Rate = None,
    threads: o.Threads = None,
    max_tries: o.MaxTries = None,
    transactions: o.Transactions = None,
    latency_limit: o.LatencyLimit = None,
    transaction_timeout: o.TransactionTimeout = None,
    routing: o.Routing = None,
    log: o.Log = False,
    sampling_rate: o.SamplingRate = None,
    tls: o.Tls = None,
    set_params: o.SetPairs = None,
    defines: o.Defines = None,
    out: o.Out = None,
    warmup: o.Warmup = None,
    seed: o.Seed = None,
    repeat: o.Repeat = None,
    warmup_runs: o.WarmupRuns = None,
    cooldown: o.Cooldown = None,
    check: o.CheckAfterRuns = False,
    keep_going: o.KeepGoing = False,
    metrics_addr: o.MetricsAddr = None,
    web: o.Web = None,
    metrics_linger: o.MetricsLinger = False,
    explain: o.Explain = False,
    threshold: ci.Threshold = None,
    baseline: ci.Baseline = None,
    thresholds_strict: ci.ThresholdsStrict = False,
    abort_on_fail: ci.AbortOnFail = False,
    abort_grace: ci.AbortGrace = None,
    junit: ci.Junit = None,
    recipe: o.Recipe = None,
    quick: o.Quick = False,
    dry_run: o.DryRun = False,
    resume: o.Resume = None,
    ray: o.Ray = None,
    workers: o.Workers = None,
    workers_per_node: o.WorkersPerNode = None,
    output_format: o.Format = OutputFormat.AUTO,
) -> None:
    """Run a workload or a plan and record the results; with no arguments, the demo."""
    # The flags are RunOptions' fields by the same names (lists arrive as None when not given).
    given = {k: v for k, v in locals().items() if k not in ("dry_run", "output_format", "junit")}
    flags = {k: [] if v is None and k in LIST_FLAGS else v for k, v in given.items()}
    flags["workload"] = workload or None  # no words: the demo
    from dbscale.plan.build import (
        RunOptions,  # here, not at the top: heavy, and only `run` needs it
    )

    options = RunOptions(**flags)
    commands.run(
        options, env=os.environ, now=datetime.now(UTC), dry_run=dry_run,
        output_format=output_format, junit=junit,
    )  # fmt: skip


@app.command("capacity")
def capacity_cmd(
    workload: o.Workload = None,
    slo: o.Slo = None,
    max_errors: o.MaxErrors = None,
    knob: o.Knob = None,
    resolution: o.Resolution = None,
    settle: o.Settle = None,
    measure: o.Measure = None,
    confirm: o.Confirm = None,
    target: o.Targets = None,
    clients: o.CapacityClients = None,
    protocol: o.Protocol = None,
    threads: o.Threads = None,
    tls: o.Tls = None,
    set_params: o.SetPairs = None,
    defines: o.Defines = None,
    out: o.Out = None,
    seed: o.Seed = None,
    resume: o.Resume = None,
    metrics_addr: o.MetricsAddr = None,
    web: o.Web = None,
    metrics_linger: o.MetricsLinger = False,
    threshold: ci.Threshold = None,
    baseline: ci.Baseline = None,
    thresholds_strict: ci.ThresholdsStrict = False,
    junit: ci.Junit = None,
    dry_run: o.DryRun = False,
) -> None:
    """The highest load the target sustains within latency objectives (docs/capacity.md)."""
    from dbscale.plan.build import RunOptions
    from dbscale.plan.sources import CapacityFlags

    search = CapacityFlags(
        slo=slo or [], max_errors=max_errors, knob=knob, resolution=resolution, settle=settle,
        measure=measure, confirm=confirm,
    )  # fmt: skip
    # The search's plan: its levels are its runs, so no repetitions or warm-ups of its own.
    options = RunOptions(
        workload=workload or None, target=target, clients=clients or [], protocol=protocol,
        threads=threads, tls=tls, set_params=set_params or [], defines=defines or [], out=out,
        seed=seed, resume=resume, repeat=1, warmup_runs=0, warmup="0", capacity=search,
        metrics_addr=metrics_addr, web=web, metrics_linger=metrics_linger,
        threshold=threshold or [], baseline=baseline, thresholds_strict=thresholds_strict,
    )  # fmt: skip
    commands.run(options, env=os.environ, now=datetime.now(UTC), dry_run=dry_run, junit=junit)


@app.command("recipes")
def recipes_cmd() -> None:
    """List the bundled plans that reproduce published studies."""
    commands.recipes()


@app.command("compare")
def compare_cmd(
    dir_a: Annotated[Path, typer.Argument(help="Results directory A (the baseline).")],
    dir_b: Annotated[
        Path | None,
        typer.Argument(help="Results directory B; omitted: compare --a and --b points of A."),
    ] = None,
    select_a: Annotated[
        str | None, typer.Option("--a", help="Points of side A: axis=value[,axis=value].")
    ] = None,
    select_b: Annotated[
        str | None, typer.Option("--b", help="Points of side B: axis=value[,axis=value].")
    ] = None,
    noise: Annotated[
        float | None,
        typer.Option("--noise", help="Noise threshold in % (default: the plan's, else 2)."),
    ] = None,
    detect: Annotated[
        str | None,
        typer.Option(
            "--detect",
            help="A change (e.g. 5%) to size for: the runs per side that detect it at 80% power.",
        ),
    ] = None,
    statements: Annotated[
        bool,
        typer.Option(
            "--statements",
            help="Also which statement made the difference: each one's server time per call "
            "B/A with an interval, ordered by its share of the change.",
        ),
    ] = False,
    as_json: o.AsJson = False,
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the comparison as a self-contained HTML page."),
    ] = None,
    junit: ci.Junit = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on", help="worse: exit 9 when a point of B is worse than A.", metavar="worse"
        ),
    ] = None,
) -> None:
    """Compare TPS and p95/p99 latency point by point, with intervals, p-values and verdicts."""
    from dbscale.results.compare import ComparisonOptions, parse_change_pct

    options = ComparisonOptions(
        select_a=select_a,
        select_b=select_b,
        noise_pct=noise,
        detect_pct=parse_change_pct(detect) if detect is not None else None,
        statements=statements,
    )
    if fail_on not in (None, "worse"):
        raise ConfigError(f"--fail-on {fail_on!r} is not known", "the one choice is: worse")
    commands.compare(dir_a, dir_b, options, as_json, html=html, env=os.environ, junit=junit,
                     fail_on_worse=fail_on == "worse")  # fmt: skip


app.command("rank")(rank_command.rank_cmd)
app.add_typer(history_command.history_app, name="history")


app.add_typer(export_command.export_app, name="export")
app.command("schemas")(export_command.schemas_cmd)


@app.command("report")
def report_cmd(
    directory: Annotated[Path, typer.Argument(help="A results directory `dbscale run` wrote.")],
    images: Annotated[
        bool,
        typer.Option("--images", help="Also write every chart as PNG and SVG (report-images/)."),
    ] = False,
) -> None:
    """Draw DIR/report.html: the results' charts and numbers in one page that works offline."""
    commands.report(directory, images=images, env=os.environ)


def _data_command(action: str, summary: str) -> Callable[..., None]:
    """`prepare` and `cleanup`: the same options, one action on the workload's tables."""

    def command(
        workload: o.DataWorkload,
        target: o.Targets = None,
        set_params: o.SetPairs = None,
        tls: o.Tls = None,
    ) -> None:
        plan = commands.plan_data(
            workload, targets=target or [], set_params=set_params or [], tls=tls, env=os.environ
        )
        commands.data_step(action, plan)

    command.__doc__ = summary
    return command


app.command("prepare")(
    _data_command("prepare", "Create and load the workload's tables (e.g. --set scale=10).")
)
app.command("cleanup")(_data_command("cleanup", "Drop the workload's tables."))


@app.command("check")
def check_cmd(
    workload: o.DataWorkload,
    target: o.Targets = None,
    set_params: o.SetPairs = None,
    tls: o.Tls = None,
) -> None:
    """Check the workload's data against its consistency conditions (TPC-C's 3.3.2.1-12 and
    cardinalities); exit 7 when one fails."""
    plan = commands.plan_data(
        workload, targets=target or [], set_params=set_params or [], tls=tls, env=os.environ
    )
    commands.check_data(plan)


@app.command("workloads")
def workloads_cmd(
    name: Annotated[
        str | None, typer.Argument(help="A workload: show its --set parameters.")
    ] = None,
    as_json: o.AsJson = False,
) -> None:
    """List the workloads, one line each; `dbscale workloads NAME` shows one's parameters."""
    commands.workloads(name, as_json)


app.add_typer(micro_app.micro_app, name="micro")


@app.command(
    "pgbench",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                      "help_option_names": ["--help"]},  # -h is pgbench's host
)  # fmt: skip
def pgbench_cmd(ctx: typer.Context) -> None:
    """pgbench's own command line (`dbscale pgbench -i -s 10 bench`, `dbscale pgbench -c 8 -j 2
    -T 60 -S -M prepared bench`): -i loads TPC-B; a run is recorded as a dbscale study and
    printed as pgbench prints it. Options without a dbscale equivalent are refused by name."""
    from dbscale.cli.pgbench_command import pgbench

    pgbench(list(ctx.args), env=os.environ, now=datetime.now(UTC))


@app.command(
    "sysbench",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                      "help_option_names": []},  # sysbench's own options go through
)  # fmt: skip
def sysbench_cmd(ctx: typer.Context) -> None:
    """sysbench's own command line (`dbscale sysbench oltp_read_write --tables=4
    --table-size=100000 --mysql-host=db prepare`, then `... --threads=8 --time=60 run`): a run is
    recorded as a dbscale study and printed as sysbench prints it. Options without a dbscale
    equivalent are refused by name."""
    from dbscale.cli.sysbench_command import sysbench

    sysbench(list(ctx.args), env=os.environ, now=datetime.now(UTC))


@app.command("version")
def version_cmd() -> None:
    """Print dbscale's version."""
    commands.version()


def _click_error(exc: BaseException) -> tuple[str, int] | None:
    """(message, exit code) of a click/typer usage error, else None. Matched by class name, as
    typer itself does, because typer vendors click privately in some versions."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "ClickException" not in names:
        return None
    ctx = getattr(exc, "ctx", None)
    if "NoArgsIsHelpError" in names and ctx is not None:
        print(ctx.get_help())
        return "", EXIT_OK
    path = getattr(ctx, "command_path", None) or "dbscale"
    code = int(getattr(exc, "exit_code", EXIT_USAGE))
    option = str(getattr(exc, "option_name", "") or "")
    if "NoSuchOption" in names and (known := peer_flag(option)) is not None:
        what, instead = known
        return f"error: {path} has no {option}: it is {what}\nhint: {instead}", code
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    return f"error: {message}\nhint: see `{path} --help`", code


# The words `--flag=WORD` may give an on/off flag.
TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "no", "off", "0"})


def _on_off_flags() -> dict[str, str | None]:
    """The long names of every on/off flag of every command (`--check`, `--json`, ...), each
    with its `--no-` form if it has one. Read by attribute: typer vendors click privately."""
    names: dict[str, str | None] = {}
    pending: list[Any] = [typer.main.get_command(app)]
    while pending:
        command = pending.pop()
        pending.extend(getattr(command, "commands", {}).values())
        for param in command.params:
            if getattr(param, "is_flag", False):
                off = next((name for name in param.secondary_opts if name.startswith("--")), None)
                names.update((name, off) for name in param.opts if name.startswith("--"))
    return names


def flag_words(argv: list[str]) -> list[str]:
    """`--check=false` as `--check` left out and `--check=true` as `--check`, for every on/off
    flag: what people type for a flag after a config file's `check: false`. Any other word is
    left for the parser to refuse. (The flags are looked up only when a word could be one:
    walking every command costs a command line 50 ms.)"""
    if not any(word.startswith("--") and "=" in word for word in argv):
        return argv
    flags = _on_off_flags()
    rewritten: list[str] = []
    for index, word in enumerate(argv):
        name, has_value, value = word.partition("=")
        if "--" in argv[:index] or not has_value or name not in flags:
            rewritten.append(word)
        elif value.strip().lower() in TRUE_WORDS:
            rewritten.append(name)
        elif value.strip().lower() in FALSE_WORDS:
            off = flags[name]
            rewritten.extend([off] if off else [])
        else:
            rewritten.append(word)
    return rewritten


def foreign_digits(words: list[str]) -> str | None:
    """The first word written as a number in digits other than ASCII's (`-c ٣`): Python's int()
    and float() read them, and a value typed in another script must not become a setting."""
    for word in words:
        value = word.partition("=")[2] if word.startswith("--") else word
        if any(c.isdigit() and not c.isascii() for c in value) and all(
            c.isdigit() or c in "+-.,eE" for c in value.strip()
        ):
            return word
    return None


def run_cli(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit code. Errors are printed as `error:`/`hint:`."""
    words = flag_words(list(sys.argv[1:] if argv is None else argv))
    foreign = foreign_digits(words)
    if foreign is not None:
        print(f"error: {foreign!r} is written with digits dbscale does not read as a number\n"
              "hint: write numbers with the digits 0-9", file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    try:
        with interrupts.handled():
            result = app(args=words, prog_name="dbscale", standalone_mode=False)
    except Cancelled as exc:
        print(exc.render(), file=sys.stderr)
        return interrupts.exit_code()
    except DbscaleError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        return _interrupted()
    except Exception as exc:
        usage = _click_error(exc)
        if usage is not None:
            if usage[0]:
                print(usage[0], file=sys.stderr)
            return usage[1]
        if os.environ.get("DBSCALE_DEBUG"):
            traceback.print_exc()
        print(
            f"error: internal error: {type(exc).__name__}: {exc}\n"
            "hint: this is a dbscale bug; please report it (DBSCALE_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    if result == TYPER_INTERRUPTED and interrupts.interrupted():
        return _interrupted()  # typer turned the KeyboardInterrupt into a bare exit 130
    return result if isinstance(result, int) else EXIT_OK


# What typer returns for a KeyboardInterrupt inside a command (click's Exit(130)).
TYPER_INTERRUPTED = 130


def _interrupted() -> int:
    """One error line for an interrupted command, and the signal's exit code (143: SIGTERM);
    the hint says what of the servers this process started still runs, if anything."""
    from dbscale.targets.local.server import still_running

    left = still_running()
    hint = "nothing was left running"
    if left:
        hint = (f"still running: {'; '.join(left)}; the next dbscale start in that directory "
                "stops it (or kill the pid)")  # fmt: skip
    print(f"error: interrupted ({interrupts.cause()})\nhint: {hint}", file=sys.stderr)
    return interrupts.exit_code()


def main(argv: list[str] | None = None) -> NoReturn:
    """The `dbscale` console script. Everything is written when the command returns; a thread
    still waiting in native code then (on a server that stopped answering, its wait bounded but
    not over) would make the interpreter's shutdown abort the process, so the process ends
    without that shutdown, its output flushed."""
    code = run_cli(argv)
    lingering = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if lingering:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
