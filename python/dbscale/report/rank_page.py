"""The page of a `dbscale rank` table: the top configurations as dots with their 95% intervals,
every configuration as a strip of its runs, tie groups shaded, and the table with rank
intervals, prices and the runs left out."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbscale import __version__
from dbscale.ranking.output import rank_words
from dbscale.ranking.table import RankedConfiguration, RankTable
from dbscale.report import bundle
from dbscale.report.chart import Chart
from dbscale.report.markup import Markup, element, join
from dbscale.report.page import chart_figures, facts_list, html_document, warnings_box
from dbscale.report.rows import r4
from dbscale.report.specs import CONFIG
from dbscale.report.tables import Cell, html_table

HEAT_SHADES = ("#fff1c2", "#dbeafe")  # dead-heat groups, alternating
ROW_HEIGHT = 22
WIDTH = 560


def _label(c: RankedConfiguration) -> str:
    return f"{c.rank}. {c.configuration}" if c.rank is not None else f"-. {c.configuration}"


def _shade(c: RankedConfiguration) -> str:
    if not c.dead_heat or c.tie_group is None:
        return "none"
    return f"dead heat {c.tie_group}"


def _bands(configurations: list[RankedConfiguration]) -> tuple[list[dict[str, Any]], Any]:
    rows = [{"configuration": _label(c), "group": _shade(c)} for c in configurations]
    groups = sorted({r["group"] for r in rows if r["group"] != "none"})
    scale = {"domain": groups or ["-"],
             "range": [HEAT_SHADES[i % 2] for i in range(len(groups))] or ["#ffffff"]}  # fmt: skip
    return [r for r in rows if r["group"] != "none"], scale


def _layers(
    configurations: list[RankedConfiguration], y: dict[str, Any], marks: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    bands, scale = _bands(configurations)
    shading = {
        "data": {"values": bands},
        "mark": {"type": "rect"},
        "encoding": {"y": y, "x": {"value": 0}, "x2": {"value": "width"},
                     "color": {"field": "group", "type": "nominal", "scale": scale,
                               "title": "tie group"}},
    }  # fmt: skip
    return ([shading] if bands else []) + marks


def dot_chart(table: RankTable, top: int) -> Chart:
    shown = table.configurations[:top]
    data = [{"configuration": _label(c), "median": r4(c.median), "lo": r4(c.ci_low),
             "hi": r4(c.ci_high), "n": c.n, "rank": rank_words(c.rank_low, c.rank_high, c.rank),
             "interval": c.ci_method} for c in shown]  # fmt: skip
    order = [d["configuration"] for d in data]
    y = {"field": "configuration", "type": "nominal", "sort": order, "title": None}
    x_title = f"{table.title} ({table.unit})"
    marks = [
        {"data": {"values": data}, "mark": {"type": "rule", "color": "#59636e"},
         "encoding": {"y": y, "x": {"field": "lo", "type": "quantitative", "title": x_title,
                                    "scale": {"zero": False}}, "x2": {"field": "hi"}}},
        {"data": {"values": data}, "mark": {"type": "point", "filled": True, "size": 70,
                                            "color": "#0969da"},
         "encoding": {"y": y, "x": {"field": "median", "type": "quantitative"},
                      "tooltip": [{"field": "configuration"}, {"field": "median"},
                                  {"field": "lo", "title": "95% CI low"},
                                  {"field": "hi", "title": "95% CI high"},
                                  {"field": "interval"}, {"field": "n", "title": "runs"},
                                  {"field": "rank", "title": "rank [95%]"}]}},
    ]  # fmt: skip
    spec = {"title": f"Top {len(shown)} by {table.title}", "config": CONFIG, "width": WIDTH,
            "height": max(60, ROW_HEIGHT * len(shown)),
            "layer": _layers(shown, y, marks)}  # fmt: skip
    better = "right" if table.higher_is_better else "left"
    caption = (f"Each configuration's median over its runs (dot) with its 95% interval "
               f"(order statistics; the range when it has fewer than 6 runs); better is to the "
               f"{better}. Shaded rows are a statistical dead heat: their 95% rank intervals "
               "overlap, so these runs cannot order them.")  # fmt: skip
    return Chart("rank-top", "rank", f"Top {len(shown)}", caption, spec)


def strip_chart(table: RankTable) -> Chart:
    every = table.configurations
    runs = [{"configuration": _label(c), "value": r4(v), "run": i + 1}
            for c in every for i, v in enumerate(c.values)]  # fmt: skip
    medians = [{"configuration": _label(c), "median": r4(c.median)} for c in every]
    order = [_label(c) for c in every]
    y = {"field": "configuration", "type": "nominal", "sort": order, "title": None}
    marks = [
        {"data": {"values": runs}, "mark": {"type": "point", "opacity": 0.55, "size": 30,
                                            "color": "#59636e"},
         "encoding": {"y": y, "x": {"field": "value", "type": "quantitative",
                                    "title": f"{table.title} ({table.unit})",
                                    "scale": {"zero": False}},
                      "tooltip": [{"field": "configuration"}, {"field": "run"},
                                  {"field": "value"}]}},
        {"data": {"values": medians}, "mark": {"type": "tick", "color": "#0969da",
                                               "thickness": 2},
         "encoding": {"y": y, "x": {"field": "median", "type": "quantitative"}}},
    ]  # fmt: skip
    spec = {"title": "Every configuration, every run", "config": CONFIG, "width": WIDTH,
            "height": max(60, ROW_HEIGHT * len(every)),
            "layer": _layers(every, y, marks)}  # fmt: skip
    caption = (
        "Each run's value (grey) and each configuration's median (blue tick), in rank "
        "order; configurations with too few runs to rank come last."
    )
    return Chart("rank-strips", "rank", "Every configuration", caption, spec)


def _table(table: RankTable) -> Markup:
    headers = ["rank [95%]", "tie group", "configuration", "runs", "median", "95% CI low",
               "95% CI high", "interval", "CV %", "min", "max"]  # fmt: skip
    if table.price_metric:
        headers.append(table.price_metric)
    rows: list[list[Cell]] = []
    for c in table.configurations:
        row: list[Cell] = [rank_words(c.rank_low, c.rank_high, c.rank),
                           _shade(c) if c.dead_heat else "", c.configuration, c.n, c.median,
                           c.ci_low, c.ci_high, c.ci_method, c.cv_pct, c.min, c.max]  # fmt: skip
        if table.price_metric:
            row.append(c.price_per_unit)
        rows.append(row)
    return html_table(headers, rows)


def render_rank_html(
    table: RankTable, *, top: int = 10, cache_dir: Path | None = None, now: datetime | None = None
) -> str:
    charts = [dot_chart(table, top), strip_chart(table)]
    direction = "higher is better" if table.higher_is_better else "lower is better"
    facts = {
        "metric": f"{table.title} ({table.unit}; {direction})",
        "by": ", ".join(table.by),
        "studies": ", ".join(table.studies),
        "all runs": ", ".join(f"{k}={v}" for k, v in table.common.items()),
        "allowed to differ": ", ".join(table.allowed),
        "rule": "rank by median; 95% rank interval from a bootstrap over each configuration's "
        f"runs ({table.resamples} resamples); a configuration needs 3 runs to be ranked",
        "drawn": f"dbscale {__version__}, "
        + (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    warnings = [f"statistical dead heat: {', '.join(g)}" for g in table.dead_heats]
    reasons = Counter(row.reason for row in table.left_out)
    left = [element("li", f"{n} run(s): {reason}") for reason, n in reasons.most_common()]
    left_out = join([element("h2", "Runs left out"), element("ul", join(left))]) if left else None
    body = join([
        element("header", element("h1", f"dbscale rank: {table.title}"), facts_list(facts),
                warnings_box(warnings)),
        element("main", chart_figures(charts), element("h2", "Configurations"),
                element("div", _table(table), class_="table-wrap"), left_out),
    ])  # fmt: skip
    return html_document(
        title=f"dbscale rank: {table.title} by {', '.join(table.by)}", body=body, charts=charts,
        bundle_js=bundle.javascript_bundle(cache_dir), schema=bundle.schema_url(),
    )  # fmt: skip
