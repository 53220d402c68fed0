"""A saturated load-generator worker gets the advice that fits where it ran."""

from __future__ import annotations

from dbscale.results.record import RunRecord
from dbscale.run.resume_checks import saturated_workers
from dbscale.scaleout.messages import WorkerEntry


def _record(target: str, *workers: WorkerEntry) -> RunRecord:
    return RunRecord(target=target, workers=list(workers))


def test_local_workers_beside_the_database_are_not_told_to_add_workers() -> None:
    busy = WorkerEntry(name="local-1", host_cpu_busy_pct=97.0, saturated=True)
    calm = WorkerEntry(name="local-2", host_cpu_busy_pct=40.0, saturated=False)
    [line] = saturated_workers(_record("postgresql://u@127.0.0.1:5432/db", busy, calm))
    assert line.startswith("local-1: its host's CPU was 97.0% busy")
    assert "shares this machine with the database" in line and "--ray" in line
    assert "add workers" not in line


def test_local_workers_of_a_remote_database_and_ray_nodes() -> None:
    local = WorkerEntry(name="local-1", host_cpu_busy_pct=95.0, saturated=True)
    [line] = saturated_workers(_record("postgresql://u@db1.invalid/db", local))
    assert "more workers on this machine would share the same CPUs" in line
    remote = WorkerEntry(name="ray-1", node_ip="192.0.2.7", host_cpu_busy_pct=99.0, saturated=True)
    [line] = saturated_workers(_record("postgresql://u@db1.invalid/db", remote))
    assert "add Ray nodes" in line
