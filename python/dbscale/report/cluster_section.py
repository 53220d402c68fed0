"""A cluster's section of the report: each node's share of the work and its latency (the
nodes' histograms merged over a point's runs, never percentiles averaged), the failovers, and
each fault step's cost run by run: the unavailability window over the whole target and on the
node it hit, the transactions failed, and the time back to 90% of the throughput before it.
"""

from __future__ import annotations

from statistics import median

from dbscale import core
from dbscale.report.markup import Markup, element, join
from dbscale.report.rows import r4
from dbscale.report.tables import Cell, table_block
from dbscale.report.view import PointView, ResultsView, RunView
from dbscale.results.failover_cost import step_costs
from dbscale.results.fault_windows import FaultWindow, Window
from dbscale.results.record import RunRecord


def cluster_points(study: ResultsView) -> list[PointView]:
    """The points whose runs recorded per-node figures."""
    return [p for p in study.points if any(r.record.nodes for r in p.runs)]


def node_latency(runs: list[RunView], index: int) -> tuple[float | None, float | None]:
    """p50 and p99 (ms) of node `index` over `runs`, from their histograms merged."""
    blobs = [
        r.record.nodes[index].histogram
        for r in runs
        if index < len(r.record.nodes) and r.record.nodes[index].transactions > 0
    ]
    if not blobs:
        return None, None
    figures = core.histogram_figures(blobs, (0.5, 0.99))
    return figures.values[0], figures.values[1]


def node_rows(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    headers = ["point", "node", "role in its runs", "routing", "connections",
               "share of transactions %",
               "TPS (median of runs)", "p50 ms", "p99 ms", "failed", "sessions lost",
               "failovers"]  # fmt: skip
    rows: list[list[Cell]] = []
    for point in cluster_points(study):
        runs = [r for r in point.runs if r.record.nodes]
        first = runs[0].record
        total = sum(r.record.transactions for r in runs) or 1
        for index, node in enumerate(first.nodes):
            mine = [r.record.nodes[index] for r in runs if index < len(r.record.nodes)]
            tps = [
                n.transactions / r.record.duration_s
                for n, r in zip(mine, runs, strict=False)
                if r.record.duration_s > 0
            ]
            p50, p99 = node_latency(runs, index)
            roles = [r.record.node_roles[index].words() for r in runs
                     if index < len(r.record.node_roles)]  # fmt: skip
            rows.append([
                point.label, node.node, ", ".join(dict.fromkeys(roles)) or "–",
                first.routing or "–",
                median(n.connections for n in mine),
                r4(100 * sum(n.transactions for n in mine) / total),
                r4(median(tps)) if tps else None, r4(p50), r4(p99),
                sum(n.failed for n in mine), sum(n.lost for n in mine),
                sum(n.failovers for n in mine),
            ])  # fmt: skip
    return headers, rows


NBSP = "\u00a0"


def _unbroken(text: str) -> str:
    """A figure with its unit and range on one line (the table scrolls rather than wraps it)."""
    return text.replace(" ", NBSP).replace("–", "\u2060–\u2060")  # no break at the dash


def _window_text(window: Window) -> str:
    return _unbroken(_window_words(window))


def _window_words(window: Window) -> str:
    if window.seconds is None and window.last_success_s is not None:
        return f"none after {window.last_success_s:.2f} s"
    if not window.seconds:
        return "–"
    if window.last_success_s is None:
        return f"{window.seconds:.3f} s (to its first at {window.first_success_s or 0:.2f} s)"
    return (
        f"{window.seconds:.3f} s ({window.last_success_s or 0:.2f} – "
        f"{window.first_success_s or 0:.2f} s)"
    )


def _hit(window: FaultWindow) -> Window:
    """The window on the node the step acted on (n1 is the first node)."""
    if window.node is None or not window.node.startswith("n"):
        return Window()
    index = int(window.node[1:]) - 1
    return window.nodes[index] if index < len(window.nodes) else Window()


def fault_rows(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    headers = ["run", "step", "at s", "whole target without a success", "on the node",
               "failed", "failovers", "TPS before", "back to 90% after s", "TPS after"]  # fmt: skip
    rows: list[list[Cell]] = []
    for run in study.runs:
        for window in run.record.fault_windows:
            step = f"{window.action} {window.node or '?'}"
            if window.planned_node not in (None, window.node):
                step += f" (the {window.planned_node})"
            if window.error:
                step += f" (failed: {window.error})"
            rows.append([
                run.label, step, window.at_s, _window_text(window.overall),
                _window_text(_hit(window)), window.failed, window.failovers, window.before_tps,
                window.recovered_after_s if window.recovered_after_s is not None else "not back",
                window.after_tps,
            ])  # fmt: skip
    return headers, rows


def downtime_rows(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    """Per point and planned step: the median window over its runs and their range, and the
    median time back to 90% counted from the step and from the scenario's first step."""
    headers = ["point", "step", "runs", "median s without a success", "range s",
               "back to 90% after s (median)", "… from the first step s"]  # fmt: skip
    rows: list[list[Cell]] = []
    for cost in step_costs(point_runs(study)):
        down = cost.downtime_s
        rows.append([
            cost.point, cost.step, cost.runs, r4(median(down)),
            _unbroken(f"{min(down):.3f} – {max(down):.3f}"),
            r4(median(cost.back_s)) if cost.back_s else "not back",
            r4(median(cost.since_first_s)) if cost.since_first_s else "not back",
        ])  # fmt: skip
    return headers, rows


def point_runs(study: ResultsView) -> list[tuple[str, list[RunRecord]]]:
    """Each point's label and its counted runs' records."""
    return [(point.label, [run.record for run in point.runs]) for point in study.points]


def cluster_section(study: ResultsView) -> Markup:
    """The section, or nothing when no run was on several nodes or had fault steps."""
    points = cluster_points(study)
    faulted = any(r.record.fault_windows for r in study.runs)
    if not points and not faulted:
        return Markup()
    parts = [
        element("h2", "Cluster: nodes, failovers and faults", id="cluster"),
        element("p", "Each node's share of the transactions and its latency (its histograms "
                "merged over the point's runs). A session lost to a node that went away, would "
                "not serve or let the client's deadline pass counts as lost; a failover when its "
                "client then went on on another node."),
        table_block(*node_rows(study)),
    ]  # fmt: skip
    if faulted:
        parts += [
            element("h3", "Downtime per fault step", id="cluster-downtime"),
            element("p", "A stretch without a successful transaction is measured to the "
                    "millisecond (the last success before it, the first after it) over the "
                    "whole target and on the node the step acted on; 'back to 90%' is the time "
                    "from the step to the first second at 90% of the throughput before the "
                    "first step."),
            table_block(*downtime_rows(study)),
            table_block(*fault_rows(study)),
        ]  # fmt: skip
    return join(parts, "\n")


def cluster_link(study: ResultsView) -> Markup | None:
    shown = cluster_points(study) or any(r.record.fault_windows for r in study.runs)
    return element("a", "Cluster", href="#cluster") if shown else None
