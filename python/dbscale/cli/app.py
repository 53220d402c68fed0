"""The `dbscale` command line: parse options, hand them to `commands`, turn every failure into an
`error:` line and a `hint:` line with a meaningful exit code, never a traceback.
"""

from __future__ import annotations

import os
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from dbscale.cli import commands
from dbscale.errors import EXIT_CANCELLED, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, DbscaleError
from dbscale.modes import ConnectMode, QueryProtocol, TlsMode
from dbscale.run.output_format import OutputFormat

app = typer.Typer(
    name="dbscale",
    help="Database benchmarking with honest statistics. `dbscale run` alone runs a demo.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["--help"]},
)

TargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="postgresql://user[:password]@host[:port]/db, libpq key=value, or `embedded` "
        "(default: a private PostgreSQL dbscale starts). PGPASSWORD fills in a missing password.",
        show_default=False,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Workload parameter key=value (repeatable), e.g. --set scale=10."),
]
TlsOpt = Annotated[
    TlsMode | None,
    typer.Option("--tls", help="TLS mode, like libpq's sslmode.", show_default=False),
]


TargetsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--target",
        help="postgresql://user[:password]@host[:port]/db, libpq key=value, or `embedded` "
        "(default: a private PostgreSQL dbscale starts); NAME=URL names it, and repeating the "
        "option gives a plan several targets. PGPASSWORD fills in a missing password.",
        show_default=False,
    ),
]


@app.command("run")
def run_cmd(
    workload: Annotated[
        str | None,
        typer.Argument(
            help="Workload name (`dbscale workloads`) or a plan file (plan.yaml); omitted: the "
            "demo.",
            show_default=False,
        ),
    ] = None,
    target: TargetsOpt = None,
    clients: Annotated[
        list[str] | None,
        typer.Option("--clients", "-c", help="Clients; a comma list (1,4,8) runs one run each."),
    ] = None,
    duration: Annotated[
        str | None, typer.Option("--duration", "-T", help="Measured time per run: 30s, 2m, 500ms.")
    ] = None,
    protocol: Annotated[
        QueryProtocol | None, typer.Option("--protocol", "-M", help="Query protocol (pgbench -M).")
    ] = None,
    connect: Annotated[
        ConnectMode | None,
        typer.Option("--connect", help="per-transaction reconnects for each transaction (-C)."),
    ] = None,
    rate: Annotated[
        float | None,
        typer.Option("--rate", "-R", help="Open model: target transactions/s over all clients."),
    ] = None,
    threads: Annotated[
        int | None, typer.Option("--threads", "-j", help="Worker threads (default: cores).")
    ] = None,
    max_tries: Annotated[
        int | None,
        typer.Option("--max-tries", help="Tries per transaction on serialization/deadlock."),
    ] = None,
    tls: TlsOpt = None,
    set_params: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="key=value, repeatable: a workload parameter (scale=10) or, with a plan, any "
            "plan field (repeat=3, load.duration=10s, targets.main.socket_dir=/tmp).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Results directory (default results/<UTC time>-<workload>)."
        ),
    ] = None,
    warmup: Annotated[
        str | None, typer.Option("--warmup", help="Warm-up run first (recorded, marked warmup).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Random seed (default: drawn).")
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option("--repeat", help="Measured runs per point (plans: 5; plain runs: 1)."),
    ] = None,
    warmup_runs: Annotated[
        int | None,
        typer.Option("--warmup-runs", help="Warm-up runs before each point's first run."),
    ] = None,
    cooldown: Annotated[
        str | None, typer.Option("--cooldown", help="Pause between runs: 30s, 2m.")
    ] = None,
    recipe: Annotated[
        str | None, typer.Option("--recipe", help="Run a bundled plan (`dbscale recipes`).")
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="The recipe's few-minute variant.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the points, runs and estimated time; run nothing."),
    ] = False,
    resume: Annotated[
        Path | None,
        typer.Option("--resume", help="Finish an interrupted study in this results directory."),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--output-format",
            help="Plain per-second lines and per-run block shaped like pgbench's or sysbench's "
            "(sysbench's on stdout); auto: the workload family's own, and a live panel on a "
            "terminal.",
        ),
    ] = OutputFormat.AUTO,
) -> None:
    """Run a workload or a plan and record the results; with no arguments, the demo."""
    from dbscale.plan.build import (
        RunOptions,  # here, not at the top: it is heavy and only `run` needs it
    )

    options = RunOptions(
        workload=workload,
        target=target or None,
        clients=clients or [],
        duration=duration,
        protocol=protocol,
        connect=connect,
        rate_tps=rate,
        threads=threads,
        max_tries=max_tries,
        tls=tls,
        set_params=set_params or [],
        out=out,
        warmup=warmup,
        seed=seed,
        repeat=repeat,
        warmup_runs=warmup_runs,
        cooldown=cooldown,
        recipe=recipe,
        quick=quick,
        resume=resume,
    )
    commands.run(
        options, env=os.environ, now=datetime.now(UTC), dry_run=dry_run,
        output_format=output_format,
    )  # fmt: skip


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
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the comparison as a self-contained HTML page."),
    ] = None,
) -> None:
    """Compare TPS and p95/p99 latency point by point, with intervals, p-values and verdicts."""
    from dbscale.results.compare import ComparisonOptions

    options = ComparisonOptions(select_a=select_a, select_b=select_b, noise_pct=noise)
    commands.compare(dir_a, dir_b, options, as_json, html=html, env=os.environ)


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


@app.command("prepare")
def prepare_cmd(
    workload: Annotated[str, typer.Argument(help="Workload name (`dbscale workloads`).")],
    target: TargetOpt = None,
    set_params: SetOpt = None,
    tls: TlsOpt = None,
) -> None:
    """Create and load the workload's tables (e.g. --set scale=10)."""
    plan = commands.plan_data(
        workload, target=target, set_params=set_params or [], tls=tls, env=os.environ
    )
    commands.prepare(plan)


@app.command("cleanup")
def cleanup_cmd(
    workload: Annotated[str, typer.Argument(help="Workload name (`dbscale workloads`).")],
    target: TargetOpt = None,
    set_params: SetOpt = None,
    tls: TlsOpt = None,
) -> None:
    """Drop the workload's tables."""
    plan = commands.plan_data(
        workload, target=target, set_params=set_params or [], tls=tls, env=os.environ
    )
    commands.cleanup(plan)


@app.command("workloads")
def workloads_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
) -> None:
    """List the workloads and their --set parameters."""
    commands.workloads(as_json)


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
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    path = getattr(ctx, "command_path", None) or "dbscale"
    code = int(getattr(exc, "exit_code", EXIT_USAGE))
    return f"error: {message}\nhint: see `{path} --help`", code


def run_cli(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit code. Errors are printed as `error:`/`hint:`."""
    try:
        result = app(args=argv, prog_name="dbscale", standalone_mode=False)
    except DbscaleError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("error: interrupted\nhint: nothing was left running", file=sys.stderr)
        return EXIT_CANCELLED
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
    return result if isinstance(result, int) else EXIT_OK


def main(argv: list[str] | None = None) -> NoReturn:
    """The `dbscale` console script."""
    sys.exit(run_cli(argv))
