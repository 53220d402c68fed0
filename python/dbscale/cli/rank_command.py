"""`dbscale rank DIR... --metric M --by FACT[,FACT]`: configurations across studies, ranked."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from dbscale.cli import options as o
from dbscale.cli.consoles import data_console, message_console
from dbscale.errors import ConfigError, ResultsError
from dbscale.files import write_atomic


def split_words(values: list[str] | None) -> list[str]:
    """`--by a,b --by c` as [a, b, c]."""
    return [w.strip() for v in values or [] for w in v.split(",") if w.strip()]


def parse_where(values: list[str] | None) -> dict[str, str]:
    where = {}
    for pair in split_words(values):
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise ConfigError(f"--where {pair!r} is not FACT=VALUE", "e.g. --where clients=8")
        where[name.strip()] = value.strip()
    return where


def write_output(path: Path, text: str, what: str) -> None:
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise ResultsError(f"cannot write {path}: {exc.strerror or exc}",
                           "choose a writable path") from None  # fmt: skip
    message_console().print(f"{what}: {path}", highlight=False, soft_wrap=True)


def rank_cmd(
    directories: Annotated[
        list[Path],
        typer.Argument(help="Results directories (studies) to rank together.", metavar="DIR"),
    ],
    metric: o.RankMetric = "tps",
    by: o.ByFacts = None,
    allow: o.AllowFacts = None,
    where: o.WhereFacts = None,
    require: Annotated[
        str | None,
        typer.Option(
            "--require",
            help="pass: only runs that met their rule (TPC-C's, else no errors).",
            metavar="pass",
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", help="Configurations shown.", min=1, metavar="N")
    ] = 10,
    as_json: o.AsJson = False,
    csv_path: Annotated[
        Path | None, typer.Option("--csv", help="Also write the table as CSV.", metavar="FILE")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the ranking as an HTML page.", metavar="FILE"),
    ] = None,
) -> None:
    """Rank configurations by a metric: medians with intervals, rank intervals, dead heats."""
    from dbscale.ranking.output import print_rank_table, rank_csv
    from dbscale.ranking.table import RankRequest, rank
    from dbscale.report import default_cache_dir
    from dbscale.report.rank_page import render_rank_html

    if require not in (None, "pass"):
        raise ConfigError(f"--require {require!r} is not known", "the one requirement is: pass")
    table = rank(RankRequest(
        directories=directories, metric=metric, by=split_words(by), allow=split_words(allow),
        where=parse_where(where), require_pass=require == "pass",
    ))  # fmt: skip
    if csv_path is not None:
        write_output(csv_path, rank_csv(table), "rank table")
    if html is not None:
        page = render_rank_html(table, top=top, cache_dir=default_cache_dir(os.environ))
        write_output(html, page, "rank page")
    out = data_console()
    if as_json:
        out.print_json(json.dumps(table.model_dump(), default=str))
    else:
        print_rank_table(table, out, top)
