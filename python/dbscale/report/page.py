"""The HTML page: one file with the charting library, the styles, every chart's spec and data
inlined, and summary.csv embedded as a data: URI, so it opens offline and can be mailed around.
Charts are drawn by vega-embed as SVG; a chart that fails to draw says so in its place and on the
console (the browser test fails on any console error).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from dbscale.report import headline
from dbscale.report.ch_section import ch_link, ch_section
from dbscale.report.chart import Chart
from dbscale.report.cluster_section import cluster_link, cluster_section
from dbscale.report.command_table import commands_section
from dbscale.report.markup import Markup, element, join, text
from dbscale.report.published_section import published_link, published_section
from dbscale.report.statement_table import statements_section
from dbscale.report.tables import (
    html_table,
    micro_table,
    point_table,
    run_table,
    summary_csv,
    table_section,
    worker_table,
)
from dbscale.report.tpcc_section import tpcc_link, tpcc_section
from dbscale.report.tpch_section import tpch_link, tpch_section
from dbscale.report.view import ResultsView
from dbscale.report.ycsb_section import ycsb_link, ycsb_section

STYLE = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d0d7de; --warn: #fff8c5; --warn-line: #d4a72c; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--ink);
       margin: 0 auto; padding: 24px 28px 48px; max-width: 1480px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 32px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.headline { font-size: 15px; margin: 0 0 14px; padding-left: 20px; }
.headline li { margin: 2px 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.warnings { background: var(--warn); border: 1px solid var(--warn-line); border-radius: 6px;
            padding: 8px 16px; margin: 16px 0; }
.warnings ul { margin: 4px 0; padding-left: 20px; }
nav { margin: 16px 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
nav a { white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 20px; }
figure.chart { margin: 0; padding: 12px; border: 1px solid var(--line); border-radius: 6px;
               max-width: 100%; overflow-x: auto; }
figure.chart figcaption { color: var(--muted); width: 0; min-width: 100%; margin-top: 6px;
                          font-size: 13px; }
.vis { min-height: 120px; }
.vis[data-rendered="error"] { color: #cf222e; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 12.5px; margin: 8px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 10px; text-align: left;
         vertical-align: top; }
th { background: #f6f8fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.note { min-width: 16em; max-width: 36em; }
footer { color: var(--muted); margin-top: 32px; font-size: 12px; }
"""

SCRIPT = """
(function () {
  var specs = JSON.parse(document.getElementById("dbscale-specs").textContent);
  var options = {mode: "vega-lite", renderer: "svg",
                 actions: {export: true, source: false, compiled: false, editor: false}};
  var pending = Object.keys(specs).map(function (id) {
    var el = document.getElementById("chart-" + id);
    var opts = Object.assign({}, options, {downloadFileName: id});
    return vegaEmbed(el, specs[id], opts).then(function () {
      el.setAttribute("data-rendered", "true");
    }).catch(function (err) {
      el.setAttribute("data-rendered", "error");
      el.textContent = "This chart could not be drawn: " + err;
      console.error("dbscale chart " + id + ": " + err);
    });
  });
  window.dbscaleChartsReady = Promise.all(pending).then(function () {
    document.body.setAttribute("data-charts", "done");
  });
})();
"""


def script_json(value: Any) -> str:
    """JSON safe inside a <script> element (no `</script>`, no `<!--`)."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def data_uri(text: str, mime: str = "text/csv") -> str:
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"data:{mime};charset=utf-8;base64,{encoded}"


def html_document(
    *, title: str, body: Markup, charts: Sequence[Chart], bundle_js: str, schema: str
) -> str:
    """A complete page: the body's markup, then the library and the chart specs inlined (as
    script text that cannot close its element)."""
    chart_specs = {c.id: {"$schema": schema, **c.spec} for c in charts}
    safe_bundle = bundle_js.replace("</script", "<\\/script")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title><style>{STYLE}</style></head>\n<body>\n{text(body)}\n"
        f"<script>{safe_bundle}</script>\n"
        f'<script type="application/json" id="dbscale-specs">{script_json(chart_specs)}</script>\n'
        f"<script>{SCRIPT}</script>\n</body></html>\n"
    )


def chart_figure(chart: Chart) -> Markup:
    vis = element("div", class_="vis", id=f"chart-{chart.id}", data_kind=chart.kind, role="img",
                  aria_label=chart.title)  # fmt: skip
    return element("figure", vis, element("figcaption", chart.caption), class_="chart",
                   id=chart.id)  # fmt: skip


def chart_figures(charts: Sequence[Chart]) -> Markup:
    return element("div", join(chart_figure(c) for c in charts), class_="charts")


def facts_list(facts: Mapping[str, str]) -> Markup:
    items = join(join([element("dt", k), element("dd", v)]) for k, v in facts.items() if v)
    return element("dl", items, class_="facts")


def warnings_box(warnings: Sequence[str]) -> Markup:
    if not warnings:
        return Markup()
    items = join(element("li", w) for w in warnings)
    return element("div", element("strong", "Warnings"), element("ul", items), class_="warnings",
                   id="warnings")  # fmt: skip


def headline_list(sentences: Sequence[str]) -> Markup:
    """The sentences that answer the study's question (report/headline.py)."""
    if not sentences:
        return Markup()
    return element("ul", join(element("li", s) for s in sentences), class_="headline",
                   id="headline")  # fmt: skip


def header_facts(study: ResultsView, host_note: str) -> dict[str, str]:
    h = study.header
    targets = "; ".join(
        " ".join(
            [t["target"]]
            + ([f"({t['server']})"] if t.get("server") else [])
            + ([f"{t['vCPUs']} vCPUs"] if t.get("vCPUs") else [])
        )
        for t in h.targets
    )
    swept = ", ".join(
        f"{a.title} ({', '.join(a.format(v) for v in a.values)})" for a in study.swept
    )
    following = ", ".join(a.title for a in study.axes if not a.swept)
    counts = h.counts
    runs = f"{counts['measured']} measured, {counts['warm-up']} warm-up"
    if counts["cancelled"] or counts["failed"]:
        runs += f", {counts['cancelled']} cancelled, {counts['failed']} failed"
    host = ", ".join(f"{k} {v}" for k, v in h.host.items()) or host_note
    return {
        "workload": ", ".join(h.workloads),
        "targets": targets,
        "swept": swept or "nothing (one configuration)",
        "following the sweep": following,
        "settings": ", ".join(f"{k}={v}" for k, v in h.constants.items()),
        "runs": f"{runs}; {len(study.points)} point{'s' if len(study.points) != 1 else ''}",
        "when (UTC)": f"{h.started_at} – {h.ended_at}".replace("T", " "),
        "dbscale": ", ".join(h.versions),
        "client host": host,
    }


def workers_section(study: ResultsView) -> Markup:
    """The load-generator workers of scaled-out runs, when there were any (docs/scaleout.md)."""
    headers, rows = worker_table(study)
    if not rows:
        return Markup()
    intro = (
        "Each scaled-out run's clients were spread over these workers; the run's figures above "
        "are their exact merge (histograms merged, never percentiles averaged)."
    )
    return table_section("workers", "Load-generator workers", intro, headers, rows)


def machine_section(study: ResultsView) -> Markup:
    """The micro-benchmarks' figures per host, when the study ran any (micro.jsonl)."""
    if not study.micro_rows:
        return Markup()
    headers, rows = micro_table(study)
    intro = (
        "CPU, storage and network of each target's host (and the client), measured in the study "
        "before its database runs; medians over the samples of each figure with their 95% CI "
        "(6+ samples: order statistics, else Student-t of the mean), from micro.jsonl."
    )
    return table_section("machine", "Machine: micro-benchmarks", intro, headers, rows)


def render_report_html(
    study: ResultsView,
    charts: Sequence[Chart],
    *,
    bundle_js: str,
    schema: str,
    generated: Mapping[str, str],
) -> str:
    """The report page of `study`. `generated` names the dbscale and library versions and time."""
    nav = join(element("a", c.title, href=f"#{c.id}") for c in charts)
    p_headers, p_rows = point_table(study)
    r_headers, r_rows = run_table(study)
    csv_note = "the statistics' summary.csv" if study.summary_csv is not None else "the table above"
    machine_link = element("a", "Machine", href="#machine") if study.micro_rows else None
    host_note = f"not recorded in runs.jsonl; this report was drawn on {generated.get('host', '?')}"
    header = element(
        "header",
        element("h1", f"dbscale report: {study.header.title}"),
        element("p", ", ".join(study.header.workloads), " on ",
                ", ".join(t["target"] for t in study.header.targets), class_="sub"),
        headline_list(headline.sentences(study)),
        facts_list(header_facts(study, host_note)),
        warnings_box(study.warnings),
        element("nav", nav, tpcc_link(study), ch_link(study), tpch_link(study), ycsb_link(study),
                cluster_link(study), published_link(study),
                element("a", "Points", href="#points"), element("a", "Runs", href="#runs"),
                machine_link),
    )  # fmt: skip
    download = element("a", "Download summary.csv", id="summary-csv", download="summary.csv",
                       href=data_uri(summary_csv(study)))  # fmt: skip
    main = element(
        "main",
        chart_figures(charts),
        tpcc_section(study),
        ch_section(study),
        tpch_section(study),
        ycsb_section(study),
        cluster_section(study),
        published_section(study),
        element("h2", "Points", id="points"),
        element("p", "One row per configuration; throughput statistics over its runs, latency "
                "from the merged histogram of its runs. ", download,
                f" (embedded in this page: {csv_note})."),
        element("div", html_table(p_headers, p_rows), class_="table-wrap"),
        element("h2", "Runs", id="runs"),
        element("div", html_table(r_headers, r_rows), class_="table-wrap"),
        statements_section(study),
        commands_section(study),
        workers_section(study),
        machine_section(study),
    )  # fmt: skip
    footer = element(
        "footer",
        f"Drawn by dbscale {generated.get('dbscale', '?')} at {generated.get('at', '')} from "
        f"{study.path}/runs.jsonl with Vega {generated.get('vega', '?')}, Vega-Lite "
        f"{generated.get('vega-lite', '?')} (bundled; no network needed).",
    )
    body = join([header, main, footer], "\n")
    return html_document(
        title=f"dbscale report: {study.header.title}",
        body=body,
        charts=charts,
        bundle_js=bundle_js,
        schema=schema,
    )
