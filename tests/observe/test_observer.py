"""The observer's own lifecycle, without a benchmark: an unreachable server is noted, resources
are still sampled, and a failing observer never takes the run's record with it."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType

import pytest

from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig
from dbscale.core.result import Interval
from dbscale.observe.observer import ObserveOptions, RunObserver
from dbscale.observe.watch import StudyObserver
from dbscale.results.record import RunRecord

UNREACHABLE = RunConfig(
    target=TargetConfig(url="postgresql://postgres@127.0.0.1:1/nowhere"),
    workload=WorkloadConfig(name="tpcb"),
)
FAST = ObserveOptions(resource_interval_s=0.25, wait_interval_s=0.1)


def test_unreachable_server_is_noted_and_resources_still_sampled(core: ModuleType) -> None:
    observer = RunObserver(UNREACHABLE, options=FAST)
    observer.start()
    time.sleep(0.3)
    observer.intervals([Interval(t_s=0.25)])
    time.sleep(1.0)
    section = observer.finish(RunRecord(duration_s=1.0, tps=0.0, clients=1)).model_dump(
        mode="json", exclude_unset=True
    )
    assert any("no server statistics" in note for note in section["notes"])
    assert section["server"] == {"dialect": "postgresql", "local": False, "pid": None}
    assert section["waits"] is None
    assert len(section["resources"]["rows"]) >= 2
    assert "host_idle_pct" in section["resources"]["mean"]
    assert section["limited_by"]["verdict"] in ("unknown", "host-contention", "concurrency")
    observer.close()  # idempotent


def test_a_failing_observer_leaves_a_note(
    core: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = StudyObserver(tmp_path, options=FAST)
    watch = study.watch(UNREACHABLE)

    def broken(self: RunObserver, native: object) -> dict[str, object]:
        raise RuntimeError("boom")

    monkeypatch.setattr(RunObserver, "finish", broken)
    section = watch.finish(RunRecord(duration_s=1.0))
    assert section.model_dump(exclude_unset=True) == {
        "version": 1, "notes": ["observation failed: RuntimeError: boom"],
    }  # fmt: skip
    watch.close()
    assert (study.summary_host().logical_cpus or 0) >= 1
