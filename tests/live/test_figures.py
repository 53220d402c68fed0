"""The live figures as a study reports them: each second adds to its run's series, a kept run's
record replaces the sums, the endpoint's text parses as OpenMetrics with the names docs/watching.md
lists, and the page's state draws with the report's chart code."""

from __future__ import annotations

import json

from prometheus_client import CollectorRegistry
from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from dbscale.core.result import Interval, IntervalLatency
from dbscale.live.exposition import StudyCollector
from dbscale.live.figures import StudyFigures
from dbscale.live.page import live_state
from dbscale.results.record import RunRecord
from dbscale.run.watchers import RunLabels


def _labels(run: str, nodes: tuple[str, ...] = ()) -> RunLabels:
    return RunLabels(study="s", point="clients=2", run=run, target="pg", phase="measured",
                     clients=2, rate_tps=None, runs_done=0, runs_total=2, eta_s=30.0,
                     nodes=nodes)  # fmt: skip


def _second(t_s: float, transactions: int, by_node: list[int] | None = None) -> Interval:
    latency = IntervalLatency(mean=1.0, stddev=0.1, p50=1.0, p95=2.0, p99=3.0, max=4.0)
    return Interval(t_s=t_s, transactions=transactions, tps=float(transactions), errors=1,
                    latency_ms=latency, clients_connected=2, by_node=by_node or [],
                    by_type={"tpcb": transactions}, errors_by_class={"deadlock": 1})  # fmt: skip


def _samples(figures: StudyFigures) -> dict[str, float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StudyCollector(figures))
    text = generate_latest(registry).decode()
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            keep = {k: v for k, v in sample.labels.items() if k in ("run", "node", "type", "le")}
            if "step" in sample.labels:
                assert sample.labels["step"] == "kill n2"
            found[f"{sample.name}{json.dumps(keep, sort_keys=True)}"] = sample.value
    return found


def test_seconds_add_up_and_the_record_settles_them() -> None:
    figures = StudyFigures("s", "/nonexistent")
    figures.run_began(_labels("r1", nodes=("n1:5432/db", "n2:5432/db")))
    figures.intervals([_second(1.0, 10, [6, 4]), _second(2.0, 12, [12, 0])])
    figures.note("fault: kill n2 at 1.50 s")
    live = _samples(figures)
    assert live['dbscale_transactions_total{"run": "r1"}'] == 22
    assert live['dbscale_errors_total{"run": "r1"}'] == 2
    assert live['dbscale_node_transactions_total{"node": "n2:5432/db", "run": "r1"}'] == 4
    assert live['dbscale_run_active{"run": "r1"}'] == 1
    assert live['dbscale_type_transactions_total{"run": "r1", "type": "tpcb"}'] == 22
    assert live['dbscale_error_class_total{"run": "r1"}'] == 2
    assert live['dbscale_node_up{"node": "n2:5432/db", "run": "r1"}'] == 1  # "kill n2" is not it
    assert live['dbscale_fault_steps_total{"run": "r1"}'] == 1
    assert 28.0 <= live["dbscale_study_eta_seconds{}"] <= 29.0  # 30 s, less the 1st second
    record = RunRecord.model_validate({"run_key": "r1", "transactions": 25, "failed": 1,
                                       "errors": {"total": 3, "by_class": {"deadlock": 3}},
                                       "clients_connected": 2})  # fmt: skip
    figures.run_kept(record)
    kept = _samples(figures)
    assert kept['dbscale_transactions_total{"run": "r1"}'] == 25
    assert kept['dbscale_failures_total{"run": "r1"}'] == 1
    assert kept['dbscale_error_class_total{"run": "r1"}'] == 3
    assert kept['dbscale_run_active{"run": "r1"}'] == 0
    assert kept["dbscale_study_runs_done{}"] == 1


def test_the_page_state_draws_every_second_and_marks_fault_steps() -> None:
    figures = StudyFigures("s", "/nonexistent")
    figures.run_began(_labels("r1", nodes=("n1", "n2")))
    figures.intervals([_second(1.0, 10, [6, 4]), _second(2.0, 12, [12, 0])])
    figures.note("fault: kill n2 at 1.50 s")
    state = json.loads(json.dumps(live_state(figures), allow_nan=False))
    assert state["running"] and state["runs"][0]["transactions"] == 22
    timeline = state["timeline"]
    assert timeline["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    assert [row["tps"] for row in timeline["data"]["values"]] == [10.0, 12.0]
    nodes = state["nodes"]
    assert {row["node"] for row in nodes["data"]["values"]} == {"n1", "n2"}
    marks = [layer for layer in nodes["spec"]["layer"] if layer["mark"]["type"] == "rule"]
    assert marks and marks[0]["data"]["values"][0]["step"].startswith("kill n2")
    assert state["capacity"] == [] and state["report"] is None
