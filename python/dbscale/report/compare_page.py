"""The page of a `dbscale compare` result: A against B point by point, each metric's relative
change with its CI against the noise band, and each verdict. `render_compare_html(comparison)`
takes what `dbscale.results.compare.compare_dirs` returns (what `dbscale compare --json` prints):

    {"a": str, "b": str, "noise_threshold_pct": f, "alpha": f, "confidence": f,
     "points": [{"point": str, "tps": Change, "p95_ms": Change, "p99_ms": Change}],
     "unmatched": [str]}

with each Change as `dbscale.stats.comparison.Change` (median_a/b, n_a/b, change_pct,
ci_low_pct, ci_high_pct, p_value, p_adjusted, verdict, higher_is_better).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbscale import __version__
from dbscale.report import bundle
from dbscale.report.chart import Chart
from dbscale.report.markup import Markup, element, join
from dbscale.report.page import chart_figures, facts_list, html_document, warnings_box
from dbscale.report.rows import r4
from dbscale.report.specs import CONFIG, FACET_WIDTH
from dbscale.report.tables import Cell, html_table
from dbscale.results.compare import Comparison
from dbscale.results.statement_compare import Ratio
from dbscale.stats.comparison import (
    BETTER,
    INCONCLUSIVE,
    SAME,
    TOO_FEW,
    WORSE,
    Change,
    verdict_words,
)

# Latency: the median of the runs' own percentiles (the runs are what is compared), not the
# summary's percentile of all transactions merged.
METRICS = (("tps", "TPS"), ("p95_ms", "p95 latency (median of runs)"),
           ("p99_ms", "p99 latency (median of runs)"))  # fmt: skip
STATEMENTS_SHOWN = 15  # per point
# The legend's classes are the verdicts' own words (stats/comparison.py).
COLORS = {BETTER: "#2da44e", WORSE: "#cf222e", SAME: "#8c959f", INCONCLUSIVE: "#bf8700",
          TOO_FEW: "#d0d7de"}  # fmt: skip


def changes(comparison: Comparison) -> list[tuple[str, str, Change]]:
    """(point, metric title, change) for every point and metric."""
    return [
        (row.point, title, row.metric(key)) for row in comparison.points for key, title in METRICS
    ]


def verdict_class(verdict: str) -> str:
    return verdict if verdict in COLORS else TOO_FEW


def change_chart(comparison: Comparison) -> Chart | None:
    data = [
        {
            "point": point, "metric": title, "change": r4(c.change_pct),
            "lo": r4(c.ci_low_pct), "hi": r4(c.ci_high_pct),
            "verdict": c.verdict, "class": verdict_class(c.verdict), "p": r4(c.p_adjusted),
        }
        for point, title, c in changes(comparison)
    ]  # fmt: skip
    data = [d for d in data if d["change"] is not None]
    if not data:
        return None
    noise = comparison.noise_threshold_pct
    points = list(dict.fromkeys(d["point"] for d in data))
    y = {"field": "point", "type": "nominal", "title": None, "sort": points}
    x_title = "change of B against A (%)"
    color = {"field": "class", "type": "nominal", "title": "verdict",
             "scale": {"domain": list(COLORS), "range": list(COLORS.values())}}  # fmt: skip
    layers: list[dict[str, Any]] = [
        {"mark": {"type": "rect", "color": "#eaeef2"},
         "encoding": {"x": {"datum": -noise, "type": "quantitative"}, "x2": {"datum": noise}}},
        {"mark": {"type": "rule", "color": "#59636e"},
         "encoding": {"x": {"datum": 0, "type": "quantitative"}}},
        {"mark": {"type": "errorbar", "ticks": True},
         "encoding": {"y": y, "x": {"field": "lo", "type": "quantitative", "title": x_title},
                      "x2": {"field": "hi"}, "color": color}},
        {"mark": {"type": "point", "filled": True, "size": 70},
         "encoding": {"y": y, "x": {"field": "change", "type": "quantitative", "title": x_title},
                      "color": color,
                      "tooltip": [{"field": "point"}, {"field": "metric"},
                                  {"field": "change", "title": "change %"},
                                  {"field": "lo", "title": "CI low %"},
                                  {"field": "hi", "title": "CI high %"},
                                  {"field": "p", "title": "p (Holm)"}, {"field": "verdict"}]}},
    ]  # fmt: skip
    if noise <= 0:
        layers = layers[1:]
    spec = {
        "title": "Change of B against A, with its CI",
        "config": CONFIG,
        "data": {"values": data},
        "facet": {"column": {"field": "metric", "title": None,
                             "sort": [title for _, title in METRICS]}},
        "spec": {"width": FACET_WIDTH, "height": max(60, 24 * len(points)), "layer": layers},
        "resolve": {"scale": {"x": "independent"}},
    }  # fmt: skip
    caption = (
        "Right of zero: B is higher (for latency that is worse). The grey band is the noise "
        f"threshold (±{noise:g}%): better or worse needs the whole interval outside it and a "
        "Holm-adjusted Mann-Whitney p below alpha; no significant change needs the whole "
        "interval inside it; an interval that reaches past it without a significant p is "
        "inconclusive (more runs would decide)."
    )
    return Chart("compare-change", "compare", "Change B vs A", caption, spec)


def _table(comparison: Comparison) -> Markup:
    headers = ["point", "metric", "runs A/B", "A median", "B median", "change %", "CI low %",
               "CI high %", "p (Holm)", "verdict"]  # fmt: skip
    rows: list[list[Cell]] = []
    for point, title, c in changes(comparison):
        rows.append(
            [
                point, title, f"{c.n_a}/{c.n_b}", c.median_a, c.median_b, c.change_pct,
                c.ci_low_pct, c.ci_high_pct, c.p_adjusted, verdict_words(c),
            ]
        )  # fmt: skip
    return html_table(headers, rows)


def _ratio(ratio: Ratio) -> str | None:
    if ratio.ratio is None:
        return None
    if ratio.low is None or ratio.high is None:
        return f"{ratio.ratio:.3g}x"
    return f"{ratio.ratio:.3g}x [{ratio.low:.3g}, {ratio.high:.3g}]"


def _statements(comparison: Comparison) -> Markup | None:
    """`--statements`: per point, each statement's change and share; a plan that changed."""
    if not comparison.statements:
        return None
    headers = ["point", "statement", "fingerprint", "server ms/call B/A", "client ms/call B/A",
               "ms/txn A", "ms/txn B", "share of change", "plan A", "plan B"]  # fmt: skip
    rows: list[list[Cell]] = []
    flags: list[str] = []
    for point in comparison.statements:
        flags += [f"{point.point}: {flag}" for flag in point.flags]
        for change in point.statements[:STATEMENTS_SHOWN]:
            changed = change.plan_a != change.plan_b
            rows.append([
                point.point, change.text[:120], change.fingerprint, _ratio(change.mean_ms),
                _ratio(change.client_mean_ms), r4(change.ms_per_txn_a), r4(change.ms_per_txn_b),
                None if change.share_pct is None else f"{change.share_pct:.0f}%",
                change.plan_a if changed else None, change.plan_b if changed else None,
            ])  # fmt: skip
    intro = (
        "Each statement's time per call B/A (ratio of the medians over the runs, 95% bootstrap "
        "interval), its time per committed transaction on each side (the clients' when they "
        "timed every statement, else the server's) and its share of the change; a plan shown "
        "when it differs (kept with --explain). docs/statements.md."
    )
    return join([
        element("h2", "Statements", id="statements"), element("p", intro), warnings_box(flags),
        element("div", html_table(headers, rows), class_="table-wrap"),
    ])  # fmt: skip


def render_compare_html(
    comparison: Comparison, *, cache_dir: Path | None = None, now: datetime | None = None
) -> str:
    """The comparison as one self-contained page (library inlined, no network)."""
    a, b = comparison.a or "A", comparison.b or "B"
    chart = change_chart(comparison)
    verdicts = [c.verdict for _, _, c in changes(comparison)]
    tally = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
    facts = {
        "A": a,
        "B": b,
        "verdicts": ", ".join(f"{n} {v}" for v, n in tally.items()),
        "rule": f"Mann-Whitney U, Holm-corrected, alpha {comparison.alpha}; "
        f"{comparison.confidence:.0%} CI of the change beyond "
        f"±{comparison.noise_threshold_pct:g}%",
        "drawn": f"dbscale {__version__}, "
        + (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    unmatched = comparison.unmatched
    warnings = [f"only on one side (not compared): {', '.join(unmatched)}"] if unmatched else []
    figure = chart_figures([chart]) if chart else None
    body = join([
        element("header", element("h1", "dbscale compare"), facts_list(facts),
                warnings_box(warnings)),
        element("main", figure, element("h2", "Verdicts"),
                element("div", _table(comparison), class_="table-wrap"),
                _statements(comparison)),
    ])  # fmt: skip
    return html_document(
        title=f"dbscale compare: {a} vs {b}",
        body=body,
        charts=[chart] if chart else [],
        bundle_js=bundle.javascript_bundle(cache_dir),
        schema=bundle.schema_url(),
    )
