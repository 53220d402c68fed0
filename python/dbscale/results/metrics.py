"""The metrics `rank` and `history` work on, each declared once: its name, unit, which way is
better, and how one run's value is read from its record (and its target's facts and prices).

- `tps`, `tpmc` (TPC-C New-Orders per minute), `tpm` (the headline per minute: tpmC for TPC-C,
  TPS x 60 otherwise, as the cost tables use it), each also `_per_vcpu` (the target's vCPUs,
  a cluster's over all its nodes);
- `p50_ms` ... `p999_ms`: the run's latency percentiles from its histogram;
- `errors_pct`: failed transactions over all attempted;
- `cost_per_tpm`, `cost_per_tpm_reserved`: the target's monthly cost (730 h, on demand or
  reserved) over the run's headline TPM, in the prices' currency;
- `capacity`, `capacity_per_vcpu`, `cost_per_capacity`: a capacity search's answer
  (capacity.json), one value per search;
- `micro.<figure>` (e.g. `micro.cpu_one_thread`): a micro-benchmark figure's samples;
- `stmt:<fingerprint>.<figure>`: one statement's server figures in a run (observe.statements):
  `mean_ms` (server time per call), `ms_per_txn` (its server time per committed transaction),
  `calls_per_txn`, or any counter per call (`rows`, `shared_blks_read`, `wal_bytes`,
  `rows_examined`, ...); lower is better for all. `stmt:*` in history: every statement's
  `mean_ms` and `ms_per_txn`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from dbscale.results.cost import SECONDS_PER_MINUTE, MonthlyCost
from dbscale.results.record import RunRecord

MICRO_PREFIX = "micro."
STATEMENT_PREFIX = "stmt:"
ALL_STATEMENTS = "stmt:*"
STATEMENT_FIGURES_KEPT = ("mean_ms", "ms_per_txn")  # what `stmt:*` stands for
_STATEMENT_UNITS = {"mean_ms": "ms per call", "ms_per_txn": "ms per transaction",
                    "calls_per_txn": "calls per transaction"}  # fmt: skip


@dataclass(frozen=True)
class RunFacts:
    """What a run's metrics need besides its record."""

    vcpus: float | None
    cost: MonthlyCost | None


RunValue = Callable[[RunRecord, RunFacts], float | None]


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool
    title: str
    of_run: RunValue | None = None  # None: not read from runs (capacity, micro)


def _headline(record: RunRecord) -> float | None:
    tpmc = record.tpmc
    return tpmc if tpmc is not None else record.tps * SECONDS_PER_MINUTE


def _per_vcpu(value: float | None, facts: RunFacts) -> float | None:
    if value is None or facts.vcpus is None or facts.vcpus <= 0:
        return None
    return value / facts.vcpus


def _cost_per(reserved: bool) -> RunValue:
    def value(record: RunRecord, facts: RunFacts) -> float | None:
        monthly = facts.cost.total(reserved) if facts.cost is not None else None
        tpm = _headline(record)
        if monthly is None or tpm is None or tpm <= 0:
            return None
        return monthly / tpm

    return value


def _percentile(name: str) -> RunValue:
    def value(record: RunRecord, _facts: RunFacts) -> float | None:
        found = getattr(record.latency_ms, name) if record.latency_ms is not None else None
        return float(found) if found is not None else None

    return value


def _errors_pct(record: RunRecord, _facts: RunFacts) -> float | None:
    attempted = record.transactions + record.failed
    return 100.0 * record.failed / attempted if attempted else None


RUN_METRICS = [
    Metric("tps", "transactions/s", True, "TPS", lambda r, _f: r.tps),
    Metric("tps_per_vcpu", "transactions/s per vCPU", True, "TPS per vCPU",
           lambda r, f: _per_vcpu(r.tps, f)),
    Metric("tpmc", "tpmC", True, "tpmC", lambda r, _f: r.tpmc),
    Metric("tpmc_per_vcpu", "tpmC per vCPU", True, "tpmC per vCPU",
           lambda r, f: _per_vcpu(r.tpmc, f)),
    Metric("tpm", "transactions/min", True, "TPM (tpmC for TPC-C)", lambda r, _f: _headline(r)),
    Metric("tpm_per_vcpu", "transactions/min per vCPU", True, "TPM per vCPU",
           lambda r, f: _per_vcpu(_headline(r), f)),
    Metric("p50_ms", "ms", False, "p50 latency", _percentile("p50")),
    Metric("p95_ms", "ms", False, "p95 latency", _percentile("p95")),
    Metric("p99_ms", "ms", False, "p99 latency", _percentile("p99")),
    Metric("p999_ms", "ms", False, "p99.9 latency", _percentile("p999")),
    Metric("errors_pct", "%", False, "failed transactions", _errors_pct),
    Metric("cost_per_tpm", "per TPM a month", False, "cost per TPM (on demand)",
           _cost_per(False)),
    Metric("cost_per_tpm_reserved", "per TPM a month", False, "cost per TPM (reserved)",
           _cost_per(True)),
]  # fmt: skip
CAPACITY_METRICS = [
    Metric("capacity", "transactions/s", True, "capacity within every objective"),
    Metric("capacity_per_vcpu", "per vCPU", True, "capacity per vCPU"),
    Metric("cost_per_capacity", "per unit a month", False, "monthly cost per unit of capacity"),
]
METRICS = {m.name: m for m in RUN_METRICS + CAPACITY_METRICS}
DEFAULT_HISTORY_METRICS = ("tps", "p99_ms", "tpmc", "capacity")


def micro_metric_name(figure: str) -> str:
    """`cpu one thread` -> `micro.cpu_one_thread`."""
    return MICRO_PREFIX + re.sub(r"[^a-z0-9]+", "_", figure.lower()).strip("_")


def micro_metric(figure: str, unit: str, higher_is_better: bool) -> Metric:
    return Metric(micro_metric_name(figure), unit, higher_is_better, figure)


def _statement_value(fingerprint: str, figure: str) -> RunValue:
    def value(record: RunRecord, _facts: RunFacts) -> float | None:
        section = record.observe.statements if record.observe is not None else None
        found = section.by_fingerprint().get(fingerprint) if section is not None else None
        if found is None or record.transactions <= 0:
            return None
        if figure == "ms_per_txn":
            return found.total_ms / record.transactions
        if figure == "calls_per_txn":
            return found.calls / record.transactions
        return found.per_call(figure)

    return value


def statement_metric(name: str) -> Metric | None:
    """`stmt:<fingerprint>.<figure>` as a metric; None when the name is not one."""
    if not name.startswith(STATEMENT_PREFIX):
        return None
    fingerprint, dot, figure = name.removeprefix(STATEMENT_PREFIX).partition(".")
    if not dot or not re.fullmatch(r"[0-9a-f]{6,40}", fingerprint) or not figure.isidentifier():
        return None
    unit = _STATEMENT_UNITS.get(figure, f"{figure} per call")
    return Metric(name, unit, False, f"statement {fingerprint} {figure}",
                  _statement_value(fingerprint, figure))  # fmt: skip


def statement_metrics_of(record: RunRecord) -> list[Metric]:
    """`stmt:*`: the kept figures of every statement the run's record has."""
    section = record.observe.statements if record.observe is not None else None
    if section is None:
        return []
    found = []
    for figures in section.statements:
        for figure in STATEMENT_FIGURES_KEPT:
            metric = statement_metric(f"{STATEMENT_PREFIX}{figures.fingerprint}.{figure}")
            if metric is not None:
                found.append(metric)
    return found


def metric_named(name: str) -> Metric | None:
    return METRICS.get(name) or statement_metric(name)


def known_metric(name: str) -> bool:
    return (
        name in METRICS
        or name.startswith(MICRO_PREFIX)
        or name == ALL_STATEMENTS
        or statement_metric(name) is not None
    )
