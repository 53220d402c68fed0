"""The live page of `--web`: one HTML page (served with the charting library, no network) that
asks `/live.json` each second and redraws what changed: the study's progress, each run's figures,
every run's throughput and p99 second by second and, on a cluster, each node's throughput with the
fault steps marked, both drawn by the offline report's own chart code (report/specs.py,
report/cluster_figures.py); failures by class, the capacity search's levels as they are judged,
the study's last messages, and its report once written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbscale.errors import ResultsError
from dbscale.live.figures import RunSeries, StudyFigures
from dbscale.report import specs
from dbscale.report.bundle import schema_url
from dbscale.report.cluster_figures import nodes_over_time_spec
from dbscale.report.markup import text
from dbscale.report.rows import Row, r4
from dbscale.results.capacity_file import read_capacity

TIMELINE_RUNS = 12  # the last runs drawn (the report has them all)


def live_state(figures: StudyFigures) -> dict[str, Any]:
    """What the page shows now, as JSON."""
    state, runs = figures.snapshot()
    results = Path(state.results)
    return {
        "study": state.name,
        "running": not state.ended,
        "runs_done": state.runs_done,
        "runs_planned": state.runs_total,
        "eta_s": figures.eta_now(),
        "runs": [_run_row(run) for run in runs],
        "timeline": _timeline(runs[-TIMELINE_RUNS:]),
        "nodes": _nodes(runs),
        "capacity": _capacity(results),
        "notes": figures.last_notes(),
        "report": _report_link(results, state.ended, runs),
    }


def _report_link(results: Path, ended: bool, runs: list[RunSeries]) -> dict[str, str] | None:
    """The study's report once it ended; while it runs, the report of the runs kept so far
    (drawn when the link is followed)."""
    if ended:
        return {"href": "report.html", "text": "the study's report"} if (
            results / "report.html").is_file() else None  # fmt: skip
    kept = sum(not run.active for run in runs)
    if not kept:
        return None
    return {"href": "report.html", "text": f"the report of the {kept} runs kept so far"}


def _run_row(run: RunSeries) -> dict[str, Any]:
    labels = run.labels
    last = run.seconds[-1] if run.seconds else None
    p99 = last.latency_ms.p99 if last is not None and last.latency_ms is not None else None
    return {
        "run": labels.run, "point": labels.point, "target": labels.target,
        "phase": labels.phase, "active": run.active, "clients": labels.clients,
        "connected": run.clients_connected, "rate": labels.rate_tps,
        "transactions": run.transactions, "failed": run.failed, "errors": run.errors,
        "failovers": run.failovers,
        "seconds": len(run.seconds), "tps_now": last.tps if last is not None else None,
        "p99_now_ms": p99, "error_classes": run.error_classes, "cancelled": run.cancelled,
        "events": [{"at_s": at, "text": message} for at, message in run.events],
    }  # fmt: skip


def _point(run: RunSeries) -> str:
    return "warm-up" if run.labels.phase == "warmup" else run.labels.point


def _timeline(runs: list[RunSeries]) -> dict[str, Any] | None:
    rows: list[Row] = []
    for run in runs:
        for second in run.seconds:
            if second.drain:
                continue
            row: Row = {"run": run.labels.run, "point": _point(run), "t_s": r4(second.t_s),
                        "tps": r4(second.tps), "errors": second.errors}  # fmt: skip
            for name in ("p50", "p95", "p99"):
                row[name] = r4(getattr(second.latency_ms, name, None))
            rows.append(row)
    if not rows:
        return None
    points = list(dict.fromkeys(_point(run) for run in runs if run.labels.phase == "measured"))
    return {"$schema": schema_url(), **specs.timeline(rows, points=points, percentile="p99")}


def _nodes(runs: list[RunSeries]) -> dict[str, Any] | None:
    """The last run on a cluster: each node's TPS per second, its fault steps marked."""
    run = next((r for r in reversed(runs) if r.labels.nodes and r.seconds), None)
    if run is None:
        return None
    series: list[Row] = []
    previous = 0.0
    for second in run.seconds:
        if second.drain:
            continue
        width = max(second.t_s - previous, 1e-9)
        for name, count in zip(run.labels.nodes, second.by_node, strict=False):
            series.append({"point": run.labels.run, "node": name, "t_s": r4(second.t_s),
                           "tps": r4(count / width)})  # fmt: skip
        previous = second.t_s
    marks = [{"point": run.labels.run, "t_s": r4(at), "step": message.removeprefix("fault: ")}
             for at, message in run.events if message.startswith("fault: ")]  # fmt: skip
    return {"$schema": schema_url(), **nodes_over_time_spec(series, marks)}


def _capacity(results: Path) -> list[dict[str, Any]]:
    """Each search's levels so far (capacity.json is rewritten after each level)."""
    try:
        found = read_capacity(results)
    except ResultsError:
        return []
    if found is None:
        return []
    return [{"point": search.point, "unit": search.unit,
             "objectives": [o.objective for o in search.objectives],
             "answer": [o.capacity for o in search.objectives],
             "bracket": [[o.highest_pass, o.lowest_fail] for o in search.objectives],
             "levels": [{"level": x.level, "achieved": x.achieved, "p99_ms": x.p99_ms,
                         "state": x.state, "phase": x.phase, "reasons": x.reasons}
                        for x in search.levels]}
            for search in found.searches]  # fmt: skip


def page_html(study: str) -> str:
    """The page: a skeleton the script fills from /live.json."""
    return PAGE.replace("{{title}}", text(f"dbscale: {study}"))


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:1.2rem auto;max-width:1100px;padding:0 1rem;
color:#1f2328}
h1{font-size:1.35rem;margin:.2rem 0}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;width:100%}
td,th{border-bottom:1px solid #d0d7de;padding:.2rem .5rem;text-align:right}
td:first-child,th:first-child{text-align:left}.muted{color:#59636e}
.state{display:inline-block;padding:0 .45rem;border-radius:.6rem;background:#dafbe1}
.state.ended{background:#eaeef2}.vis{width:100%;overflow-x:auto}
#notes{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap}
</style></head>
<body>
<h1>{{title}} <span id="state" class="state">connecting</span></h1>
<p id="progress" class="muted"></p>
<h2>Runs</h2><table id="runs"><thead><tr><th>run</th><th>point</th><th>phase</th>
<th>clients</th><th>transactions</th><th>TPS now</th><th>p99 now (ms)</th><th>failed</th>
<th>failovers</th><th>errors by class</th></tr></thead><tbody></tbody></table>
<h2>Each run over time</h2><div id="timeline" class="vis"></div>
<div id="nodes-part" hidden><h2>Per node</h2><div id="nodes" class="vis"></div></div>
<div id="capacity-part" hidden><h2>Capacity search</h2><div id="capacity"></div></div>
<h2>Messages</h2><div id="notes" class="muted"></div>
<p id="report"></p>
<script src="vega.js"></script>
<script>
(function () {
  "use strict";
  var drawn = {};
  function cell(row, value) {
    var td = document.createElement("td");
    td.textContent = value === null || value === undefined ? "-" : String(value);
    row.appendChild(td);
  }
  function num(x, digits) {
    return x === null || x === undefined ? "-" : Number(x).toLocaleString("en-US",
      {maximumFractionDigits: digits});
  }
  function draw(id, spec) {
    var key = JSON.stringify(spec);
    if (drawn[id] === key) { return; }
    drawn[id] = key;
    vegaEmbed("#" + id, spec, {actions: false, renderer: "svg"}).then(function () {
      document.getElementById(id).setAttribute("data-points", String(
        (spec.data && spec.data.values || []).length));
    });
  }
  function runs(state) {
    var body = document.querySelector("#runs tbody");
    body.textContent = "";
    state.runs.slice().reverse().forEach(function (r) {
      var row = document.createElement("tr");
      var classes = Object.keys(r.error_classes).map(function (k) {
        return k + " " + r.error_classes[k]; }).join(", ");
      [r.run + (r.active ? " (running)" : ""), r.point, r.phase,
       r.connected + "/" + r.clients, num(r.transactions, 0), num(r.tps_now, 1),
       num(r.p99_now_ms, 2), num(r.failed, 0), num(r.failovers, 0),
       classes || (r.errors ? r.errors + " errors" : "")
      ].forEach(function (v) { cell(row, v); });
      body.appendChild(row);
    });
  }
  function capacity(state) {
    var part = document.getElementById("capacity-part");
    part.hidden = state.capacity.length === 0;
    var box = document.getElementById("capacity");
    box.textContent = "";
    state.capacity.forEach(function (search) {
      var table = document.createElement("table");
      var head = document.createElement("tr");
      ["level", "achieved/s", "p99 (ms)", "phase", "verdict", "why"].forEach(function (h) {
        var th = document.createElement("th"); th.textContent = h; head.appendChild(th); });
      table.appendChild(head);
      search.levels.forEach(function (x) {
        var row = document.createElement("tr");
        [num(x.level, 1), num(x.achieved, 1), num(x.p99_ms, 2), x.phase, x.state,
         x.reasons.join("; ")].forEach(function (v) { cell(row, v); });
        table.appendChild(row);
      });
      var title = document.createElement("p");
      title.textContent = (search.point ? search.point + ": " : "") + search.objectives.map(
        function (o, i) { return o + " bracket [" + search.bracket[i].map(function (b) {
          return num(b, 1); }).join(", ") + "]" + (search.answer[i] !== null ?
          ", capacity " + num(search.answer[i], 1) + " " + search.unit : ""); }).join("; ");
      box.appendChild(title);
      box.appendChild(table);
    });
  }
  function show(state) {
    var badge = document.getElementById("state");
    badge.textContent = state.running ? "running" : "ended";
    badge.className = state.running ? "state" : "state ended";
    document.getElementById("progress").textContent = "runs done " + state.runs_done +
      " of " + state.runs_planned + (state.eta_s !== null && state.running ?
      ", about " + Math.round(state.eta_s) + " s to go" : "");
    runs(state);
    if (state.timeline) { draw("timeline", state.timeline); }
    document.getElementById("nodes-part").hidden = !state.nodes;
    if (state.nodes) { draw("nodes", state.nodes); }
    capacity(state);
    document.getElementById("notes").textContent = state.notes.join("\\n");
    var report = document.getElementById("report");
    report.textContent = "";
    if (state.report) {
      var a = document.createElement("a");
      a.href = state.report.href; a.textContent = state.report.text;
      report.appendChild(a);
    }
    document.body.setAttribute("data-updates",
      String(Number(document.body.getAttribute("data-updates") || 0) + 1));
  }
  function tick() {
    fetch("live.json", {cache: "no-store"}).then(function (answer) {
      return answer.json();
    }).then(show).catch(function () {
      document.getElementById("state").textContent = "not answering";
    }).finally(function () { setTimeout(tick, 1000); });
  }
  tick();
})();
</script>
</body></html>
"""
