"""Micro steps in plans: where they go among a study's steps, what a plan must say for a remote
host, their figures and statistics, and micro.jsonl's durability rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbscale.errors import PlanError, ResultsError
from dbscale.micro.figures import figures_of
from dbscale.plan.build import RunOptions
from dbscale.plan.micro_steps import MicroStep
from dbscale.plan.study import PrepareStep, RunStep, run_counts
from dbscale.results.directory import ResultsDir
from dbscale.results.micro_records import MicroRecord, append_micro, micro_summary, read_micro
from tests.plan.helpers import plan_file, study


def str_path(tmp_path: Path, text: str) -> str:
    return str(plan_file(tmp_path, text))


LOCAL_SIZES = """
targets:
  - {name: pg, url: local, vcpus: [1, 2]}
workload: tpcb
load: {duration: 1s}
repeat: 2
warmup_runs: 0
micro:
  cpu: {repetitions: 3, seconds: 0.1}
  net: {seconds: 1}
  repeat: 2
  client: true
"""


def test_micro_steps_come_before_each_target_and_the_client_first(tmp_path: Path) -> None:
    s = study(RunOptions(workload=str_path(tmp_path, LOCAL_SIZES)))
    places = [(st.place, st.kind, st.repetition) if isinstance(st, MicroStep) else
              (st.point.target.name, "run") for st in s.steps]  # fmt: skip
    assert places[:2] == [("client", "cpu", 0), ("client", "cpu", 1)]  # net needs a host
    first_run = {}
    for i, step in enumerate(s.steps):
        if isinstance(step, RunStep | PrepareStep):
            first_run.setdefault(step.point.target.name, i)
    for name in ("pg-1vcpu", "pg-2vcpu"):
        micro = [i for i, st in enumerate(s.steps)
                 if isinstance(st, MicroStep) and st.place == name]  # fmt: skip
        assert len(micro) == 4 and max(micro) < first_run[name]
        assert all(i > first_run.get("pg-1vcpu", -1) for i in micro) or name == "pg-1vcpu"
    keys = [st.key for st in s.steps if isinstance(st, MicroStep)]
    assert len(set(keys)) == len(keys) == 10
    assert "micro:net:pg-2vcpu#1" in keys
    assert run_counts(s.steps)["micro"] == 10
    done = {"micro:cpu:client#0", "micro:net:pg-1vcpu#0"}
    pending = [st.key for st in s.pending(done) if isinstance(st, MicroStep)]
    assert len(pending) == 8 and not done & set(pending)


def test_a_remote_target_needs_a_way_onto_its_host(tmp_path: Path) -> None:
    text = """
targets: [{name: db, url: "postgresql://u@db1/x"}]
workload: tpcb
micro: {cpu: {}}
"""
    with pytest.raises(PlanError, match=r"target db: micro-benchmarks run on the target's host; "
                       r"give targets.db.host.command"):  # fmt: skip
        study(RunOptions(workload=str_path(tmp_path, text)))
    with_host = text.replace(
        'url: "postgresql://u@db1/x"',
        'url: "postgresql://u@db1/x", host: {command: ssh db1 dbscale}',
    )
    s = study(RunOptions(workload=str_path(tmp_path, with_host)))
    assert [st.key for st in s.steps if isinstance(st, MicroStep)] == ["micro:cpu:db#0"]
    disk = with_host.replace("micro: {cpu: {}}", "micro: {disk: {}}")
    with pytest.raises(PlanError, match=r"micro\.disk needs a directory on its database disk"):
        study(RunOptions(workload=str_path(tmp_path, disk)))


@pytest.mark.parametrize(
    ("micro", "message"),
    [
        ("{}", "name at least one of cpu, disk and net"),
        ("{disk: {jobs: [rd-bogus]}}", "no fio job rd-bogus"),
        ("{cpu: {seconds: 0}}", r"micro.cpu.seconds: must be at least 0.01"),
        ("{net: {step: 10h}}", r"micro.net.step: must be at most 3600"),
        ("{cpu: {}, repeat: 0}", r"micro.repeat: must be at least 1"),
    ],
)
def test_bad_micro_settings_are_refused(tmp_path: Path, micro: str, message: str) -> None:
    text = f"targets: [{{name: pg, url: local}}]\nworkload: tpcb\nmicro: {micro}\n"
    with pytest.raises(PlanError, match=message):
        study(RunOptions(workload=str_path(tmp_path, text)))


FIO_JOB = {
    "job": "wr-iops-tpcc-fsync",
    "read": {"iops": 0.0, "bandwidth_kib_s": 0, "latency_us": {}},
    "write": {"iops": 2048.0, "bandwidth_kib_s": 8192, "latency_us": {"50": 40.0, "99": 900.5}},
    "fsync": {"count": 16, "latency_us": {"99": 1500.0}},
}


def test_figures_of_each_kind() -> None:
    cpu = figures_of("cpu", {"single": {"runs": [10.0, 12.0]}, "multi": {"runs": [20.0, 22.0]},
                             "per_vcpu": {"runs": [10.0, 11.0]}})  # fmt: skip
    assert cpu["cpu per vCPU"].values == [10.0, 11.0] and cpu["cpu one thread"].higher_is_better
    disk = figures_of("disk", {"jobs": [FIO_JOB]})
    assert set(disk) == {
        "wr-iops-tpcc-fsync write IOPS",
        "wr-iops-tpcc-fsync write MiB/s",
        "wr-iops-tpcc-fsync write p99",
        "wr-iops-tpcc-fsync fsync p99",
    }
    assert disk["wr-iops-tpcc-fsync write MiB/s"].values == [8.0]
    assert not disk["wr-iops-tpcc-fsync fsync p99"].higher_is_better
    net = figures_of(
        "net",
        {
            "request_response": {"transactions_per_s": 5e4, "p50_us": 18.0, "p99_us": 40.0},
            "streams": {"mean_gbps": 9.5, "series_gbps": [9.0, 10.0]},
        },
    )
    assert {k: v.values for k, v in net.items()} == {
        "net request/response": [5e4], "net request/response p50": [18.0],
        "net request/response p99": [40.0], "net streams": [9.5],
    }  # fmt: skip


def _record(place: str, rep: int, values: list[float]) -> MicroRecord:
    return MicroRecord(
        key=f"micro:cpu:{place}#{rep}", kind="cpu", place=place, repetition=rep,
        target_info={"vcpus": 2},
        figures={"cpu per vCPU": {"unit": "iterations/s", "higher_is_better": True,
                                  "values": values}},
    )  # fmt: skip


def test_the_summary_pools_a_hosts_repetitions() -> None:
    rows = micro_summary(
        [
            _record("a", 0, [100.0, 101.0, 99.0]),
            _record("a", 1, [102.0, 98.0, 100.0]),
            _record("b", 0, [50.0]),
        ]
    )
    by_place = {r.place: r.model_dump() for r in rows}
    a, b = by_place["a"], by_place["b"]
    assert a["samples"] == 6 and a["median"] == 100.0 and a["vcpus"] == 2
    assert a["ci_method"] == "order-statistic" and a["ci_low"] <= 100.0 <= a["ci_high"]
    assert a["cv_pct"] == pytest.approx(1.414, abs=0.01)
    assert b["samples"] == 1 and b["ci_low"] is None and b["cv_pct"] is None


def test_micro_jsonl_is_durable_and_strict(tmp_path: Path) -> None:
    append_micro(tmp_path, _record("a", 0, [1.0]))
    append_micro(tmp_path, _record("a", 1, [2.0]))
    path = tmp_path / "micro.jsonl"
    with path.open("a") as out:
        out.write('{"key": "micro:cpu:a#2", "ki')  # a crash mid-write
    assert [r.repetition for r in read_micro(tmp_path)] == [0, 1]
    resumed = ResultsDir(tmp_path, resume=True)  # no runs.jsonl: micro steps alone resume
    assert resumed.repaired is not None and "micro.jsonl ended in a torn record" in resumed.repaired
    assert path.read_text().count("\n") == 2
    with pytest.raises(ResultsError, match="already holds the runs of a study"):
        ResultsDir(tmp_path)
    path.write_text(path.read_text() + json.dumps({"kind": "cpu"}) + "\n")
    with pytest.raises(ResultsError, match=r"micro.jsonl, line 3: not a micro record"):
        read_micro(tmp_path)
