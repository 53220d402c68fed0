"""`dbscale rank` on synthetic results: per-vCPU figures from each run's target facts, runs left
out with their reasons (failed, outage, warm-up, TPC-C rule with --require pass), micro figures
and capacity searches ranked like runs, and the errors a user can meet."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from dbscale.errors import ConfigError
from dbscale.ranking.output import rank_csv
from dbscale.ranking.table import RankRequest, UnlikeRunsError, rank
from dbscale.results.capacity_file import (
    CapacityFile,
    CapacityStudy,
    ObjectiveResult,
    write_capacity,
)
from dbscale.results.micro_records import MicroRecord, append_micro
from tests.synthetic import make_record, write_results

SIZES = {"small": (2, 1000.0), "medium": (4, 1900.0), "large": (8, 3000.0)}


def _runs(seed: int = 1, runs: int = 5) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records = []
    for name, (vcpus, tps) in SIZES.items():
        for rep in range(runs):
            record = make_record({"target": name}, rng.gauss(tps, tps * 0.02), rng=rng,
                                 repetition=rep)  # fmt: skip
            record.update(target_name=name, started_at=f"2026-01-01T00:00:0{rep}Z",
                          target_info={"instance_type": f"m.{name}", "vcpus": vcpus})  # fmt: skip
            records.append(record)
    return records


def test_per_vcpu_ranks_and_left_out_runs(tmp_path: Path) -> None:
    records = _runs()
    records[0]["verdict"] = {"status": "failed", "message": "no transaction succeeded"}
    records[1]["warmup"] = True
    directory = write_results(tmp_path / "study", records)
    table = rank(RankRequest([directory], "tps_per_vcpu", ["instance_type"]))
    assert [c.configuration for c in table.configurations] == ["m.small", "m.medium", "m.large"]
    assert [c.rank for c in table.configurations] == [1, 2, 3]
    small = table.configurations[0]
    assert small.n == 3 and small.median == pytest.approx(500, rel=0.05)
    assert small.rank_low == small.rank_high == 1 and not small.dead_heat
    reasons = sorted(r.reason for r in table.left_out)
    assert reasons == ["failed: no transaction succeeded", "warm-up"]
    assert table.common["workload"] == "tpcb" and table.price_metric is None
    lines = rank_csv(table).splitlines()
    assert lines[0].endswith(",instance_type,metric,unit") and len(lines) == 4
    # Lower is better for latency: the order follows.
    latency = rank(RankRequest([directory], "p99_ms", ["target"]))
    assert latency.higher_is_better is False
    medians = [c.median for c in latency.configurations if c.rank is not None]
    assert medians == sorted(medians)


def test_require_pass_leaves_out_tpcc_runs_that_broke_the_rule(tmp_path: Path) -> None:
    records = _runs(runs=4)
    for i, record in enumerate(records):
        record["workload"] = "tpcc"
        record["tpcc"] = {"tpmc": 10_000.0 + i, "pass": i % 4 != 0, "efficiency_pct": 90.0}
    directory = write_results(tmp_path / "study", records)
    everything = rank(RankRequest([directory], "tpmc", ["target"]))
    assert {c.n for c in everything.configurations} == {4}
    passing = rank(RankRequest([directory], "tpmc", ["target"], require_pass=True))
    assert {c.n for c in passing.configurations} == {3}
    assert [r.reason for r in passing.left_out] == ["TPC-C rule not met"] * 3


def test_unlike_runs_are_refused(tmp_path: Path) -> None:
    records = _runs()
    for record in records[:5]:
        record["clients"] = 16
    directory = write_results(tmp_path / "study", records)
    with pytest.raises(UnlikeRunsError, match=r"clients differs \(16 in study; 4 in study\)"):
        rank(RankRequest([directory], "tps", ["target"]))
    allowed = rank(RankRequest([directory], "tps", ["target"], allow=["clients"]))
    assert len(allowed.configurations) == 3
    records[6]["warmup"] = True  # a warm-up of medium (clients 4)
    records[0]["warmup"] = True  # and one of small (clients 16)
    directory = write_results(tmp_path / "study", records)
    only = rank(RankRequest([directory], "tps", ["target"], where={"clients": "4"}))
    assert [c.configuration for c in only.configurations] == ["large", "medium"]
    assert [r.run_id for r in only.left_out] == [records[6]["run_id"]]  # not small's
    with pytest.raises(ConfigError, match="unknown metric 'tpx'"):
        rank(RankRequest([directory], "tpx", ["target"]))
    with pytest.raises(ConfigError, match="no run has the fact 'region'"):
        rank(RankRequest([directory], "tps", ["region"], allow=["clients"]))
    with pytest.raises(ConfigError, match="rank needs --by"):
        rank(RankRequest([directory], "tps", []))


def test_micro_figures_rank_by_place(tmp_path: Path) -> None:
    directory = tmp_path / "micro"
    directory.mkdir()
    rng = random.Random(3)
    for place, level in (("a", 100.0), ("b", 130.0), ("c", 101.0)):
        for rep in range(2):
            append_micro(directory, MicroRecord(
                key=f"micro:cpu:{place}#{rep}", kind="cpu", place=place, repetition=rep,
                target_info={"vcpus": 2},
                figures={"cpu per vCPU": {"unit": "iterations/s", "higher_is_better": True,
                                          "values": [rng.gauss(level, 1.0) for _ in range(3)]}},
            ))  # fmt: skip
    table = rank(RankRequest([directory], "micro.cpu_per_vcpu", ["target"]))
    assert table.configurations[0].configuration == "b"
    assert {c.n for c in table.configurations} == {6}
    assert table.unit == "iterations/s"
    heat = [c for c in table.configurations if c.dead_heat]
    assert {c.configuration for c in heat} == {"a", "c"}


def test_capacity_searches_rank_like_runs(tmp_path: Path) -> None:
    studies = []
    for index, (name, capacity) in enumerate((("x", 900.0), ("y", 1200.0))):
        records = _runs(seed=index, runs=1)[:1]
        records[0].update(run_key=f"{name}-level", target_name=name)
        directory = write_results(tmp_path / name, records)
        objective = ObjectiveResult(objective="p99<=20ms", percentile=0.99, limit_ms=20.0,
                                    capacity=capacity)  # fmt: skip
        search = CapacityFile(
            workload="tpcb", target=name, vcpus=2, knob="rate", unit="transactions/s",
            objectives=[objective], max_errors=0.001, resolution=0.02, settle_s=2,
            measure_s=(5, 10), confirm=3, capacity=capacity, finished=True, per_vcpu=capacity / 2,
            levels=[{"run_key": f"{name}-level", "level": capacity}],
        )  # fmt: skip
        write_capacity(directory, CapacityStudy(searches=[search]))
        studies.append(directory)
    table = rank(RankRequest(studies, "capacity_per_vcpu", ["target"]))
    assert [(c.configuration, c.median, c.n, c.rank) for c in table.configurations] == [
        ("y", 600.0, 1, None), ("x", 450.0, 1, None),
    ]  # fmt: skip
    assert table.common["slo"] == "p99<=20ms" and table.common["knob"] == "rate"
