"""A study's TPC-B points in ClickHouse PostgresBench's result shape (one JSON file per system,
as its `*/results/*.json`): the system and machine, the pgbench settings, and each measured run
with tps, transactions, failed transactions, latency average and stddev, initial connection
time, p95 and p99. So a dbscale result can be set beside theirs on their page.

Only TPC-B (`tpcb`, pgbench's built-in) and its select-only variant have a place there; each
point becomes one file, its measured runs in order (PostgresBench runs three)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbscale.errors import ResultsError
from dbscale.files import write_atomic
from dbscale.results.directory import RUNS_FILE, read_runs
from dbscale.results.record import RunRecord
from dbscale.targets.facts import TargetRecord, load_target_records

WORKLOADS = {"tpcb": "TPC-B (built-in)", "tpcb-select-only": "TPC-B (select-only)",
             "tpcb-simple-update": "TPC-B (simple-update)"}  # fmt: skip


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _percentile(record: RunRecord, name: str) -> float | None:
    latency = record.latency_ms
    return _round(latency.percentile(name)) if latency is not None else None


def _run_row(number: int, record: RunRecord) -> dict[str, Any]:
    latency = record.latency_ms
    connect = record.connect_ms.mean if record.connect_ms is not None else None
    return {
        "run": number, "tps": _round(record.tps, 6), "transactions": record.transactions,
        "failed_transactions": record.failed,
        "latency_avg_ms": _round(latency.mean if latency else None),
        "latency_stddev_ms": _round(latency.stddev if latency else None),
        "initial_connection_time_ms": _round(connect),
        "latency_p95_ms": _percentile(record, "p95"), "latency_p99_ms": _percentile(record, "p99"),
    }  # fmt: skip


def _system(target: TargetRecord | None, name: str) -> str:
    info = target.info if target is not None else None
    if info is not None and (info.provider or info.service):
        return " ".join(x for x in (info.provider, info.service) if x)
    return name


def point_document(records: Sequence[RunRecord], target: TargetRecord | None,
                   system: str | None) -> dict[str, Any]:  # fmt: skip
    """One point's file: its measured runs, in the order they ran."""
    first = records[0]
    info = target.info if target is not None else None
    vcpus = info.vcpus if info is not None else None
    memory = info.memory_gib if info is not None else None
    machine = ", ".join(x for x in (f"{vcpus:g}vCPU" if vcpus else "",
                                    f"{memory:g}GB RAM" if memory else "") if x)  # fmt: skip
    return {
        "system": system or _system(target, first.target_name or "postgres"),
        "date": first.started_at[:10],
        "machine": machine,
        "instance": {
            "label": first.target_name or "", "type": info.instance_type if info else None,
            "vcpus": vcpus, "ram_gb": memory, "disk_gb": info.storage_gb if info else None,
            "storage_type": info.storage_type if info else None,
        },
        "cluster_size": (info.nodes if info is not None and info.nodes else 1),
        "tuned": "unknown",
        "comment": f"dbscale {first.dbscale_version}, point {first.group_key}",
        "postgres_version": first.server_version.split(" ")[0] or None,
        "benchmark": {
            "tool": "dbscale", "workload": WORKLOADS[first.workload],
            "scale_factor": first.workload_params.get("scale"), "clients": first.clients,
            "threads": first.threads, "duration": round(first.duration_s),
            "query_mode": first.protocol,
        },
        "load": {"load_time_seconds": None},
        "results": [_run_row(i, r) for i, r in enumerate(records, start=1)],
    }  # fmt: skip


def export_postgresbench(directory: Path, out: Path, system: str | None = None) -> list[Path]:
    """A file per TPC-B point of the study in `directory`, written into `out`."""
    runs = directory / RUNS_FILE
    if not runs.is_file():
        raise ResultsError(f"{directory} holds no {RUNS_FILE}", "name a `dbscale run` results dir")
    points: dict[str, list[RunRecord]] = defaultdict(list)
    for record in read_runs(runs):
        if record.workload in WORKLOADS and record.measured:
            points[record.group_key].append(record)
    if not points:
        raise ResultsError(f"{directory} has no measured TPC-B run",
                           "PostgresBench's shape is pgbench's TPC-B: run tpcb (or "
                           "tpcb-select-only) first")  # fmt: skip
    targets = load_target_records(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for key, records in sorted(points.items()):
        document = point_document(records, targets.get(records[0].target_name or ""), system)
        name = "".join(c if c.isalnum() or c in "-_=" else "_" for c in key)
        path = out / f"{directory.name}_{name}.json"
        write_atomic(path, json.dumps(document, indent=2) + "\n")
        written.append(path)
    return written
