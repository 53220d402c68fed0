"""The figures as Prometheus metric families (prometheus_client's collector interface): per run,
counters of transactions, failures, errors and retries and a latency histogram, live each second;
per transaction type and error class once the run is kept; per node for clusters; gauges of
clients, offered rate, schedule lag and the study's progress. Names and labels are listed in
docs/watching.md."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from dbscale.errors import ResultsError
from dbscale.live.figures import LATENCY_BOUNDS_S, LatencyBuckets, RunSeries, StudyFigures
from dbscale.results.capacity_file import read_capacity

RUN_LABELS = ("study", "point", "run", "target", "phase")
NODE_STATE = {"kill": 0.0, "stop": 0.0, "start": 1.0}  # a fault step's action: the node after it


def _run_values(run: RunSeries) -> list[str]:
    labels = run.labels
    return [labels.study, labels.point, labels.run, labels.target, labels.phase]


def _buckets(latency: LatencyBuckets) -> list[tuple[str, float]]:
    pairs = [
        (f"{bound:g}", float(count))
        for bound, count in zip(LATENCY_BOUNDS_S, latency.cumulative, strict=True)
    ]
    return [*pairs, ("+Inf", float(latency.count))]


class StudyCollector(Collector):
    """Collects a StudyFigures snapshot at each scrape."""

    def __init__(self, figures: StudyFigures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[Metric]:
        state, runs = self.figures.snapshot()
        yield from _study(state.name, state.runs_done, state.runs_total,
                          self.figures.eta_now(), state.ended)  # fmt: skip
        yield from _run_counters(runs)
        yield from _run_gauges(runs)
        yield from _by_type(runs)
        yield from _by_node(runs)
        yield from _fault_steps(runs)
        yield from _node_up(runs)
        yield from _observed(runs)
        yield from _capacity(state.name, Path(state.results))


def _study(name: str, done: int, total: int, eta_s: float | None, ended: bool) -> Iterator[Metric]:
    for metric, text, value in (
        ("dbscale_study_runs_done", "Runs of the study done (warm-ups included)", done),
        ("dbscale_study_runs_planned", "Runs of the study planned (warm-ups included)", total),
        ("dbscale_study_running", "1 while the study runs, 0 once it ended", 0 if ended else 1),
    ):
        family = GaugeMetricFamily(metric, text, labels=["study"])
        family.add_metric([name], float(value))
        yield family
    if eta_s is not None:
        family = GaugeMetricFamily(
            "dbscale_study_eta_seconds",
            "The study's remaining wall time, estimated",
            labels=["study"],
        )
        family.add_metric([name], eta_s)
        yield family


def _run_counters(runs: list[RunSeries]) -> Iterator[Metric]:
    counters = {
        "dbscale_transactions": "Transactions committed in the measured window",
        "dbscale_failures": "Transactions that failed (after their retries)",
        "dbscale_errors": "Errors, each try's",
        "dbscale_retries": "Retries of transactions",
        "dbscale_failovers": "Clients that lost their node and went on on another",
    }
    families = {name: CounterMetricFamily(name, text, labels=RUN_LABELS)
                for name, text in counters.items()}  # fmt: skip
    latency = HistogramMetricFamily(
        "dbscale_transaction_latency_seconds",
        "Latency of committed transactions, all types (HDR histograms at 3 digits)",
        labels=RUN_LABELS,
    )
    for run in runs:
        values = _run_values(run)
        for name, value in (("dbscale_transactions", run.transactions),
                            ("dbscale_failures", run.failed), ("dbscale_errors", run.errors),
                            ("dbscale_retries", run.retries),
                            ("dbscale_failovers", run.failovers)):  # fmt: skip
            families[name].add_metric(values, float(value))
        latency.add_metric(values, _buckets(run.latency), run.latency.sum_s)
    yield from families.values()
    yield latency


def _run_gauges(runs: list[RunSeries]) -> Iterator[Metric]:
    active = GaugeMetricFamily("dbscale_run_active", "1 while the run goes on, 0 once kept",
                               labels=RUN_LABELS)  # fmt: skip
    clients = GaugeMetricFamily("dbscale_clients", "Clients the run asked for", labels=RUN_LABELS)
    connected = GaugeMetricFamily("dbscale_clients_connected", "Clients connected",
                                  labels=RUN_LABELS)  # fmt: skip
    rate = GaugeMetricFamily(
        "dbscale_offered_rate_tps",
        "Offered transactions per second (open model)",
        labels=RUN_LABELS,
    )
    lag = GaugeMetricFamily("dbscale_schedule_lag_seconds",
                            "Mean schedule lag of the last second (open model)",
                            labels=RUN_LABELS)  # fmt: skip
    for run in runs:
        values = _run_values(run)
        active.add_metric(values, 1.0 if run.active else 0.0)
        clients.add_metric(values, float(run.labels.clients))
        connected.add_metric(values, float(run.clients_connected))
        if run.labels.rate_tps is not None:
            rate.add_metric(values, run.labels.rate_tps)
        if run.lag_s is not None and run.active:
            lag.add_metric(values, run.lag_s)
    yield from (active, clients, connected, rate, lag)


def _by_type(runs: list[RunSeries]) -> Iterator[Metric]:
    labels = [*RUN_LABELS, "type"]
    done = CounterMetricFamily("dbscale_type_transactions", "Committed transactions by type",
                               labels=labels)  # fmt: skip
    failed = CounterMetricFamily("dbscale_type_failures", "Failed transactions by type",
                                 labels=labels)  # fmt: skip
    latency = HistogramMetricFamily("dbscale_type_latency_seconds",
                                    "Latency by transaction type, set when the run is kept",
                                    labels=labels)  # fmt: skip
    classes = CounterMetricFamily("dbscale_error_class", "Errors by class",
                                  labels=[*RUN_LABELS, "class"])  # fmt: skip
    for run in runs:
        values = _run_values(run)
        for name, kind in sorted(run.types.items()):
            done.add_metric([*values, name], float(kind.transactions))
            failed.add_metric([*values, name], float(kind.failed))
            if not run.active:  # each type's histogram comes with the record
                latency.add_metric([*values, name], _buckets(kind.latency), kind.latency.sum_s)
        for error_class, count in sorted(run.error_classes.items()):
            classes.add_metric([*values, error_class], float(count))
    yield from (done, failed, latency, classes)


def _by_node(runs: list[RunSeries]) -> Iterator[Metric]:
    family = CounterMetricFamily("dbscale_node_transactions",
                                 "Committed transactions by node of a cluster",
                                 labels=[*RUN_LABELS, "node"])  # fmt: skip
    for run in runs:
        for node, count in sorted(run.by_node.items()):
            family.add_metric([*_run_values(run), node], float(count))
    yield family


def _observed(runs: list[RunSeries]) -> Iterator[Metric]:
    """The observer's figures of each kept run (docs/observe.md): the server's mean CPU, the
    active sessions' shares by wait class, and the limited-by verdict."""
    cpu = GaugeMetricFamily("dbscale_server_cpu_cores", "The server's mean CPU use over the run",
                            labels=RUN_LABELS)  # fmt: skip
    waits = GaugeMetricFamily("dbscale_wait_class_share",
                              "Share of the server's active sessions sampled in each wait class",
                              labels=[*RUN_LABELS, "class"])  # fmt: skip
    limited = GaugeMetricFamily("dbscale_limited_by", "1 for the run's limited-by verdict",
                                labels=[*RUN_LABELS, "verdict"])  # fmt: skip
    for run in runs:
        values = _run_values(run)
        if run.server_cpu_cores is not None:
            cpu.add_metric(values, run.server_cpu_cores)
        for wait_class, share in sorted(run.wait_shares.items()):
            waits.add_metric([*values, wait_class], share)
        if run.limited_by:
            limited.add_metric([*values, run.limited_by], 1.0)
    yield from (cpu, waits, limited)


def _node_up(runs: list[RunSeries]) -> Iterator[Metric]:
    """Each node of a cluster: 1 until a fault step kills or stops it, 1 again once one starts
    it (as the steps fire)."""
    family = GaugeMetricFamily("dbscale_node_up", "A cluster's node as its fault steps left it",
                               labels=[*RUN_LABELS, "node"])  # fmt: skip
    for run in runs:
        up = dict.fromkeys(run.labels.nodes, 1.0)
        for _, message in run.events:
            action, _, rest = message.removeprefix("fault: ").partition(" ")
            node = rest.split(" ", 1)[0]
            if message.startswith("fault: ") and node in up and action in NODE_STATE:
                up[node] = NODE_STATE[action]
        for node, value in up.items():
            family.add_metric([*_run_values(run), node], value)
    yield family


def _fault_steps(runs: list[RunSeries]) -> Iterator[Metric]:
    """Each fault step as it fired (`kill n1`), counted per run: a step's series appears the
    second it fires, which Grafana can draw as an annotation."""
    family = CounterMetricFamily("dbscale_fault_steps", "Fault steps fired on a cluster's nodes",
                                 labels=[*RUN_LABELS, "step"])  # fmt: skip
    for run in runs:
        fired: dict[str, int] = {}
        for _, message in run.events:
            if message.startswith("fault: ") and " at " in message:
                step = message.removeprefix("fault: ").split(" at ", 1)[0]
                fired[step] = fired.get(step, 0) + 1
        for step, count in sorted(fired.items()):
            family.add_metric([*_run_values(run), step], float(count))
    yield family


def _capacity(study: str, results: Path) -> Iterator[Metric]:
    """A capacity search's state from its capacity.json (rewritten after each level): the last
    level judged, each objective's bracket and its answer once confirmed."""
    try:
        found = read_capacity(results)
    except ResultsError:
        return
    if found is None:
        return
    labels = ["study", "point", "objective"]
    level = GaugeMetricFamily("dbscale_capacity_level", "The last level a search judged",
                              labels=["study", "point", "verdict"])  # fmt: skip
    low = GaugeMetricFamily("dbscale_capacity_highest_pass", "The highest level that passed",
                            labels=labels)  # fmt: skip
    high = GaugeMetricFamily("dbscale_capacity_lowest_fail", "The lowest level that failed",
                             labels=labels)  # fmt: skip
    answer = GaugeMetricFamily("dbscale_capacity", "The confirmed capacity", labels=labels)
    for search in found.searches:
        if search.levels:
            last = search.levels[-1]
            level.add_metric([study, search.point, last.state], last.level)
        for objective in search.objectives:
            values = [study, search.point, objective.objective]
            for family, value in ((low, objective.highest_pass), (high, objective.lowest_fail),
                                  (answer, objective.capacity)):  # fmt: skip
                if value is not None:
                    family.add_metric(values, value)
    yield from (level, low, high, answer)
