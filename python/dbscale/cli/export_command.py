"""`dbscale export` (a finished study in another tool's format) and `dbscale schemas` (the
published JSON Schemas of what dbscale writes)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dbscale.cli.consoles import data_console

export_app = typer.Typer(help="Write a finished study in another tool's format.",
                         no_args_is_help=True)  # fmt: skip


@export_app.command("openmetrics")
def export_openmetrics_cmd(
    directory: Annotated[Path, typer.Argument(help="A results directory `dbscale run` wrote.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="The file to write (default DIR/metrics.om).", metavar="FILE"),
    ] = None,
) -> None:
    """Each run's seconds as OpenMetrics with timestamps, for `promtool tsdb
    create-blocks-from openmetrics` (docs/watching.md)."""
    from dbscale.live.backfill import export_openmetrics

    target = out or directory / "metrics.om"
    runs = export_openmetrics(directory, target)
    typer.echo(f"{target}: {runs} runs, second by second")


@export_app.command("postgresbench")
def export_postgresbench_cmd(
    directory: Annotated[Path, typer.Argument(help="A results directory with TPC-B runs.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="The directory to write into.", metavar="DIR")
    ],
    system: Annotated[
        str | None,
        typer.Option(
            "--system",
            help="The system's name (default: the target's provider and service, else its name).",
            metavar="NAME",
        ),
    ] = None,
) -> None:
    """Each TPC-B point as ClickHouse PostgresBench's result JSON (its runs with tps, latency
    average, stddev, p95, p99), to set beside their published systems."""
    from dbscale.results.postgresbench import export_postgresbench

    for path in export_postgresbench(directory, out, system):
        data_console().print(str(path), highlight=False, soft_wrap=True)


def schemas_cmd(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the schemas into DIR (default: print the list).",
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """The JSON Schemas of runs.jsonl, summary.json, capacity.json, thresholds.json and the
    history export's rows (schemas/ in the source holds the same files)."""
    from dbscale.verdicts.schemas import SCHEMAS, schema, write_schemas

    if out is None:
        for name in SCHEMAS:
            found = schema(name)
            data_console().print(f"{name}.schema.json  v{found['x-schema-version']}  "
                                 f"{found['$id']}", highlight=False, soft_wrap=True)  # fmt: skip
        return
    for path in write_schemas(out):
        data_console().print(str(path), highlight=False, soft_wrap=True)
