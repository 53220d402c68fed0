"""`dbscale history add|show|detect|exclude|export`: results over days and versions."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dbscale.cli import ci_options as ci
from dbscale.cli import options as o
from dbscale.cli.consoles import data_console, message_console
from dbscale.cli.rank_command import split_words, write_output
from dbscale.errors import ConfigError, RegressionFoundError, ResultsError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rich.console import Console

    from dbscale.history.detect import SeriesChanges
    from dbscale.history.store import HistoryStore

history_app = typer.Typer(
    help="Follow results over days and versions: add studies, show series, detect changes.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    rich_markup_mode=None,
)

Store = Annotated[
    Path | None,
    typer.Option("--store", help="The history store (default: $DBSCALE_HISTORY, else "
                 "./dbscale-history).", metavar="DIR"),
]  # fmt: skip
Metrics = o.HistoryMetrics
Last = Annotated[
    int | None,
    typer.Option("--last", help="Only the last N points of each series.", min=2, metavar="N"),
]
SeriesFilter = Annotated[
    str | None,
    typer.Option("--series", help="Only series whose key or words contain this.", metavar="TEXT"),
]
Window = Annotated[
    int, typer.Option("--window", help="Change points: the sliding window.", min=2, metavar="N")
]
PValue = Annotated[
    float,
    typer.Option("--p-value", help="Change points: the p-value a change must be under.",
                 min=1e-9, max=0.5, metavar="P"),
]  # fmt: skip
Magnitude = Annotated[
    float,
    typer.Option("--min-change", help="Change points: the smallest change kept, in %.", min=0,
                 metavar="PCT"),
]  # fmt: skip
Html = Annotated[
    Path | None,
    typer.Option("--html", help="Also write the series as an HTML page.", metavar="FILE"),
]


def _store(path: Path | None) -> HistoryStore:
    from dbscale.history.store import HistoryStore

    return HistoryStore.at(path, os.environ)


@history_app.command("add")
def add_cmd(
    directories: Annotated[
        list[Path], typer.Argument(help="Results directories to add.", metavar="DIR")
    ],
    label: o.Labels = None,
    store: Store = None,
) -> None:
    """Add studies' measured runs as one ingest: a point per series, the runs kept."""
    from dbscale.history.ingest import add_to_history, parse_labels

    found = add_to_history(_store(store), directories, parse_labels(label or []),
                           datetime.now(UTC))  # fmt: skip
    say = message_console()
    for study, runs in found.already.items():
        say.print(f"{study}: {len(runs)} runs already in the store, not added again")
    if found.left_out:
        described = "; ".join(f"{n} {reason}" for reason, n in found.left_out.items())
        say.print(f"left out: {described}")
    if found.path is None:
        raise ConfigError("nothing to add: these studies have no measured run the store lacks",
                          "run a study first, or name another results directory")  # fmt: skip
    data_console().print(f"added ingest {found.ingest_id}: {found.runs} runs, {found.series} "
                         f"series, to {found.path}", soft_wrap=True)  # fmt: skip


def _changes(store: Path | None, metric: list[str] | None, last: int | None,
             series: str | None, window: int, p_value: float,
             min_change: float) -> list[SeriesChanges]:  # fmt: skip
    from dbscale.history.detect import DetectSettings, detect
    from dbscale.history.series import build_series
    from dbscale.results.metrics import ALL_STATEMENTS, DEFAULT_HISTORY_METRICS, STATEMENT_PREFIX

    history = _store(store)
    if not history.has_ingests:
        raise ResultsError(
            f"the history store {history.path} holds no ingest",
            "add studies first: dbscale history add DIR... --label version=...",
        )
    rows = history.rows()
    wanted = split_words(metric) or list(DEFAULT_HISTORY_METRICS)
    if ALL_STATEMENTS in wanted:  # every statement's figures the store holds
        wanted += sorted({r.metric for r in rows if r.metric.startswith(STATEMENT_PREFIX)})
    found = build_series(rows, history.exclusions(), metrics=set(wanted), last=last)
    if series:
        found = [s for s in found if series in s.series_key or series in s.series
                 or series in s.target]  # fmt: skip
    if not found:
        raise ConfigError("no series has these metrics", "check --metric and --series")
    newest = max(rows, key=lambda r: r.ingested_at).ingest_id
    return detect(found, DetectSettings(window, p_value, min_change), newest)


@history_app.command("show")
def show_cmd(metric: Metrics = None, last: Last = None, series: SeriesFilter = None,
             window: Window = 50, p_value: PValue = 0.001, min_change: Magnitude = 0.0,
             as_json: o.AsJson = False, html: Html = None,
             store: Store = None) -> None:  # fmt: skip
    """Each series' points in time order, its changes marked."""
    from dbscale.history.output import print_series

    results = _changes(store, metric, last, series, window, p_value, min_change)
    _emit(results, html, as_json, print_series)


@history_app.command("detect")
def detect_cmd(metric: Metrics = None, last: Last = None, series: SeriesFilter = None,
               window: Window = 50, p_value: PValue = 0.001, min_change: Magnitude = 0.0,
               fail_on: Annotated[str | None, typer.Option(
                   "--fail-on", help="regression: exit 9 when the newest ingest regressed.",
                   metavar="regression")] = None,
               as_json: o.AsJson = False, html: Html = None, junit: ci.Junit = None,
               store: Store = None) -> None:  # fmt: skip
    """Change points per series (E-divisive means with a t-test; A/B with few points)."""
    from dbscale.history.output import marker, print_changes

    if fail_on not in (None, "regression"):
        raise ConfigError(f"--fail-on {fail_on!r} is not known", "the one choice is: regression")
    results = _changes(store, metric, last, series, window, p_value, min_change)
    _emit(results, html, as_json, print_changes)
    if junit is not None:
        from dbscale.verdicts.junit import history_cases, write_junit

        write_junit(junit, "history detect", history_cases(results))
    regressions = [(r, f) for r in results for f in r.regressions_in_newest]
    if fail_on and regressions:
        r, f = regressions[0]
        more = f" and {len(regressions) - 1} more" if len(regressions) > 1 else ""
        raise RegressionFoundError(f"regression in the newest ingest: {r.series.metric} of "
                                   f"{r.series.series} @ {r.series.target}: {marker(f)} near "
                                   f"{f.point.label_words()}{more}")  # fmt: skip


def _emit(
    results: list[SeriesChanges],
    html: Path | None,
    as_json: bool,
    printer: Callable[[Sequence[SeriesChanges], Console], None],
) -> None:
    """The page when asked for, then JSON or the console's table."""
    from dbscale.history.output import changes_json

    if html is not None:
        from dbscale.report import default_cache_dir
        from dbscale.report.history_page import render_history_html

        page = render_history_html(results, cache_dir=default_cache_dir(os.environ))
        write_output(html, page, "history page")
    if as_json:
        data_console().print_json(json.dumps(changes_json(results)))
    else:
        printer(results, data_console())


@history_app.command("exclude")
def exclude_cmd(
    run_ids: Annotated[
        list[str], typer.Argument(help="Run ids (runs.jsonl's run_id).", metavar="RUN_ID")
    ],
    reason: Annotated[
        str, typer.Option("--reason", help="Why the runs are known to be bad.", metavar="TEXT")
    ],
    store: Store = None,
) -> None:
    """Take runs known to be bad out of every series (the store keeps them, marked)."""
    from dbscale.history.store import Exclusion

    history = _store(store)
    known = history.run_ids()
    missing = [r for r in run_ids if r not in known]
    if missing:
        raise ConfigError(
            f"no run {missing[0]} in the history store {history.path}",
            "`dbscale history show --json` lists the run ids of each point",
        )
    if not reason.strip():
        raise ConfigError("--reason is empty", "say why the runs are bad")
    at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    path = history.exclude([Exclusion(r, reason.strip(), at) for r in run_ids])
    data_console().print(f"excluded {len(run_ids)} runs ({path})", soft_wrap=True)


@history_app.command("export")
def export_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="The file to write.", metavar="FILE")],
    fmt: Annotated[
        str, typer.Option("--format", help="csv or ndjson.", metavar="csv|ndjson")
    ] = "csv",
    bq_schema: Annotated[
        Path | None,
        typer.Option(
            "--bq-schema", help="Also write the rows' BigQuery schema (JSON) here.", metavar="FILE"
        ),
    ] = None,
    store: Store = None,
) -> None:
    """Every row of the store (exclusions marked) as CSV or NDJSON, and with --bq-schema the
    schema `bq load` takes for the NDJSON rows."""
    from dbscale.history.export import bq_schema_text, export_rows

    history = _store(store)
    if not history.has_ingests:
        raise ResultsError(f"the history store {history.path} holds no ingest",
                           "add studies first: dbscale history add DIR...")  # fmt: skip
    if bq_schema is not None and fmt != "ndjson":
        raise ConfigError("--bq-schema goes with --format ndjson",
                          "BigQuery loads the NDJSON rows: add --format ndjson")  # fmt: skip
    write_output(out, export_rows(history, fmt), f"{fmt} export")
    if bq_schema is not None:
        write_output(bq_schema, bq_schema_text(), "BigQuery schema")
