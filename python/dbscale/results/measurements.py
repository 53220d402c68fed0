"""One results directory as measurements: one value of one metric from one run (or one capacity
search, or one micro-benchmark sample), with what was run and where. `rank` groups them by
configuration, `history` by series, `load_results(dir).metrics` shows them as rows; each reads
them from here, so the three agree.

- **what** was run: the workload, its parameters, clients, rate, protocol, connect mode, a
  script mix, the point's axes (but `target`), a capacity search's objectives and knob, a micro
  benchmark's figure. Things that differ here are unlike things.
- **where**: the target's name and facts (provider, instance type, vCPUs, nodes, storage, ...),
  the server's version, the client host's CPU model.

Runs that do not count are left out with the reason: warm-ups, cancelled or failed runs, runs
with an outage (unless the plan counted them), and with `require_pass` TPC-C runs that broke
their rule and other runs with errors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dbscale.errors import ResultsError
from dbscale.results.capacity_file import CapacityFile, read_capacity
from dbscale.results.cost import target_monthly_cost
from dbscale.results.directory import RUNS_FILE, read_runs
from dbscale.results.metrics import (
    ALL_STATEMENTS,
    CAPACITY_METRICS,
    METRICS,
    MICRO_PREFIX,
    RUN_METRICS,
    Metric,
    RunFacts,
    micro_metric,
    statement_metric,
    statement_metrics_of,
)
from dbscale.results.micro_records import MICRO_FILE, read_micro
from dbscale.results.record import RunRecord
from dbscale.targets.facts import TargetRecord, load_target_records
from dbscale.values import format_value

# Target facts that say where a run ran (TargetInfo's fields), in the order they are shown.
WHERE_FACTS = ("provider", "service", "region", "zone", "instance_type", "vcpus", "nodes",
               "vcpus_per_node", "memory_gib", "storage_type", "storage_gb", "ha", "kind",
               "group", "engine_version")  # fmt: skip
# Where facts that may change along a series (they are what history follows, as labels do).
VERSION_FACTS = ("engine_version", "server_version")
KEY_LENGTH = 12
# The facts of what was run that a series' name shows (all of them make its key).
NAMED_FACTS = ("scale", "warehouses", "active_warehouses", "tables", "table_size", "test",
               "scripts", "clients", "rate", "knob", "slo", "figure")  # fmt: skip
ALL_MICRO = MICRO_PREFIX + "*"  # every micro-benchmark figure
# The columns `load_results(dir).metrics` and the history store share.
ROW_COLUMNS = ("study", "point_key", "run_id", "time", "metric", "value", "unit", "series_key",
               "series", "target_key", "target")  # fmt: skip


def _digest(facts: Mapping[str, str]) -> str:
    text = json.dumps(sorted(facts.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


@dataclass(frozen=True)
class Measurement:
    study: str  # the results directory
    run_id: str
    point_key: str
    time: str  # when the run (or search) started, ISO 8601
    metric: str
    value: float
    unit: str
    what: Mapping[str, str]
    where: Mapping[str, str]
    axes: tuple[str, ...] = ()  # the point's axes among the what facts

    def fact(self, name: str) -> str | None:
        return self.where.get(name, self.what.get(name))

    # A series (`dbscale history`) is what was run where, but not the server's version: the
    # version is what history follows. `series_key` hashes both, `target_key` the where alone.
    @property
    def stable_where(self) -> dict[str, str]:
        return {k: v for k, v in self.where.items() if k not in VERSION_FACTS}

    @property
    def series_key(self) -> str:
        return _digest({**{f"what.{k}": v for k, v in self.what.items()},
                        **{f"where.{k}": v for k, v in self.stable_where.items()}})  # fmt: skip

    @property
    def target_key(self) -> str:
        return _digest(self.stable_where)

    @property
    def series(self) -> str:
        """`tpcb scale=1 clients=2`: the workload and the facts that size and load it (the
        other parameters are in the series key, not in its name)."""
        named = [f"{k}={v}" for k, v in self.what.items() if k in NAMED_FACTS or k in self.axes]
        return " ".join([self.what.get("workload", ""), *named]).strip()

    @property
    def target(self) -> str:
        where = self.stable_where
        name = where.pop("target", "")
        facts = ", ".join(f"{k}={v}" for k, v in where.items())
        return f"{name} ({facts})" if facts else name

    def row(self) -> dict[str, str | float]:
        """The columns `load_results(dir).metrics` and the history store share."""
        return {name: getattr(self, name) for name in ROW_COLUMNS}


# How a run given twice (the same study twice, or a copy of it) is listed as left out.
COUNTED_ONCE = "the same run as in"


@dataclass(frozen=True)
class LeftOut:
    study: str
    run_id: str
    point_key: str
    reason: str
    facts: Mapping[str, str] = field(default_factory=dict)  # what and where, when known


@dataclass
class Measurements:
    items: list[Measurement] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    metrics: dict[str, Metric] = field(default_factory=dict)

    def extend(self, other: Measurements) -> None:
        """Adds another directory's measurements. A run already here (the same study given
        twice, or a copy of it) is counted once: its second copy is left out, saying so."""
        # (Within one directory a run may give several values of a metric: micro samples.)
        first = {(m.run_id, m.metric): m.study for m in self.items if m.run_id}
        doubled = {(x.study, x.run_id) for x in self.left_out if x.reason.startswith(COUNTED_ONCE)}
        for m in other.items:
            seen = first.get((m.run_id, m.metric)) if m.run_id else None
            if seen is None:
                self.items.append(m)
            elif (m.study, m.run_id) not in doubled:
                doubled.add((m.study, m.run_id))
                why = f"{COUNTED_ONCE} {seen} (counted once)"
                self.left_out.append(LeftOut(m.study, m.run_id, m.point_key, why))
        self.left_out += other.left_out
        self.metrics.update(other.metrics)


def _text(value: object) -> str:
    return format_value(value) if isinstance(value, str | int | float | bool) else str(value)


def run_what(record: RunRecord) -> dict[str, str]:
    """What a run ran, as named facts."""
    facts = {"workload": record.workload, "clients": str(record.clients),
             "protocol": record.protocol, "connect": record.connect}  # fmt: skip
    if record.rate_tps is not None:
        facts["rate"] = _text(record.rate_tps)
    for name, value in sorted(record.workload_params.items()):
        facts.setdefault(name, _text(value))
    mix = [f"{s.name}@{s.weight}" for s in record.scripts]
    if mix:
        facts["scripts"] = ",".join(mix)
    for axis, value in sorted(record.point.items()):
        if axis != "target":
            facts.setdefault(axis, _text(value))
    return facts


def run_where(record: RunRecord, target: TargetRecord | None) -> dict[str, str]:
    """Where a run ran: its target's name and facts, the server's version, the client's CPU."""
    info = dict(target.info.record()) if target is not None else {}
    info.update(record.target_info)
    facts = {"target": record.target_name or str(info.get("name") or record.target or "")}
    for name in WHERE_FACTS:
        if info.get(name) is not None:
            facts[name] = _text(info[name])
    if record.server_version:
        facts["server_version"] = record.server_version
    host = record.observe.host if record.observe is not None else None
    if host is not None and host.cpu_model:
        facts["cpu_model"] = host.cpu_model
    return facts


def _left_out_reason(record: RunRecord, require_pass: bool) -> str | None:
    if record.warmup:
        return "warm-up"
    if record.cancelled:
        return "cancelled"
    if record.verdict.status == "failed":
        return f"failed: {record.verdict.message}".rstrip(": ")
    if not record.measured:
        return f"outage: {record.verdict.message}".rstrip(": ")
    if require_pass and record.tpcc is not None and not record.tpcc.passed:
        return "TPC-C rule not met"
    if require_pass and record.tpcc is None and record.verdict.status != "ok":
        return f"{record.verdict.status}: {record.verdict.message}".rstrip(": ")
    return None


def _vcpus(where: Mapping[str, str]) -> float | None:
    try:
        return float(where["vcpus"])
    except (KeyError, ValueError):
        return None


def _run_measurements(
    study: str, records: Sequence[RunRecord], targets: Mapping[str, TargetRecord],
    wanted: Sequence[Metric], require_pass: bool,
) -> Measurements:  # fmt: skip
    found = Measurements(metrics={m.name: m for m in wanted})
    for record in records:
        point = record.group_key
        target = targets.get(record.target_name or "")
        what, where = run_what(record), run_where(record, target)
        reason = _left_out_reason(record, require_pass)
        if reason is not None:
            found.left_out.append(LeftOut(study, record.run_id, point, reason, {**what, **where}))
            continue
        axes = tuple(axis for axis in record.point if axis != "target")
        facts = RunFacts(_vcpus(where), target_monthly_cost(target) if target else None)
        for metric in wanted:
            value = metric.of_run(record, facts) if metric.of_run is not None else None
            if value is None:
                found.left_out.append(LeftOut(study, record.run_id, point, f"no {metric.name}",
                                              {**what, **where}))  # fmt: skip
                continue
            found.items.append(
                Measurement(study, record.run_id, point, record.started_at, metric.name,
                            float(value), metric.unit, what, where, axes)
            )  # fmt: skip
    return found


def _capacity_measurements(
    study: str, directory: Path, records: Sequence[RunRecord], wanted: Sequence[Metric]
) -> Measurements:
    found = Measurements(metrics={m.name: m for m in wanted})
    searches = read_capacity(directory)
    if searches is None:
        return found
    by_key = {r.run_key: r for r in records if r.run_key}
    targets = load_target_records(directory)
    for search in searches.searches:
        first = next((by_key[x.run_key] for x in search.levels if x.run_key in by_key), None)
        point = search.point or "capacity"
        # A search is named by its first level's run, so a copied study's is the same one.
        search_id = f"capacity:{point}:{first.run_id}" if first is not None else f"capacity:{point}"
        if first is None or not search.finished or search.capacity is None:
            why = "search unfinished" if not search.finished else "no level passed"
            found.left_out.append(LeftOut(study, search_id, point, why))
            continue
        what = {k: v for k, v in run_what(first).items() if k not in ("clients", "rate")}
        what.update(knob=search.knob, slo=",".join(o.objective for o in search.objectives))
        where = run_where(first, targets.get(search.target))
        for metric in wanted:
            value = _capacity_value(search, metric.name)
            if value is None:
                found.left_out.append(LeftOut(study, search_id, point, f"no {metric.name}"))
                continue
            found.items.append(
                Measurement(study, search_id, point, first.started_at, metric.name,
                            value, search.unit if metric.name == "capacity" else metric.unit,
                            what, where)
            )  # fmt: skip
    return found


def _capacity_value(search: CapacityFile, name: str) -> float | None:
    return {"capacity": search.capacity, "capacity_per_vcpu": search.per_vcpu,
            "cost_per_capacity": search.cost_per_unit}.get(name)  # fmt: skip


def _micro_measurements(study: str, directory: Path, wanted: Sequence[str]) -> Measurements:
    found = Measurements()
    for record in read_micro(directory):
        where = {"target": record.place}
        for name in WHERE_FACTS:
            value = record.target_info.get(name)
            if value is not None:
                where[name] = _text(value)
        for figure_name, figure in record.figures.items():
            metric = micro_metric(figure_name, figure.unit, figure.higher_is_better)
            if ALL_MICRO not in wanted and metric.name not in wanted:
                continue
            found.metrics[metric.name] = metric
            what = {"workload": f"micro {record.kind}", "figure": figure_name}
            run_id = f"{record.key}#{record.repetition}"
            for value in figure.values:
                found.items.append(
                    Measurement(study, run_id, record.key, record.started_at, metric.name,
                                float(value), figure.unit, what, where)
                )  # fmt: skip
    return found


def collect_measurements(
    directory: Path, metrics: Sequence[str], *, require_pass: bool = False
) -> Measurements:
    """The measurements of `metrics` in one results directory (names from `METRICS`, `micro.`
    figures, `micro.*` for all of them), and the runs left out with why."""
    if not (directory / RUNS_FILE).is_file() and not (directory / MICRO_FILE).is_file():
        raise ResultsError(f"{directory} holds no {RUNS_FILE}", "name a `dbscale run` results dir")
    study = directory.name
    records = read_runs(directory / RUNS_FILE) if (directory / RUNS_FILE).is_file() else []
    run_metrics = [m for m in RUN_METRICS if m.name in metrics]
    run_metrics += [m for m in map(statement_metric, metrics) if m is not None]
    if ALL_STATEMENTS in metrics:
        named = {m.name for m in run_metrics}
        for record in records:
            for metric in statement_metrics_of(record):
                if metric.name not in named:
                    named.add(metric.name)
                    run_metrics.append(metric)
    capacity_metrics = [m for m in CAPACITY_METRICS if m.name in metrics]
    found = Measurements()
    if run_metrics:
        targets = load_target_records(directory)
        found.extend(_run_measurements(study, records, targets, run_metrics, require_pass))
    if capacity_metrics:
        found.extend(_capacity_measurements(study, directory, records, capacity_metrics))
    micro = [m for m in metrics if m.startswith(MICRO_PREFIX)]
    if micro:
        found.extend(_micro_measurements(study, directory, micro))
    for name in metrics:
        if name in METRICS:
            found.metrics.setdefault(name, METRICS[name])
    return found
