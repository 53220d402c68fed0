"""Study order: interleaved rounds, warm-ups, data loads and reloads, cooldown estimate, and the
steps left when resuming."""

from __future__ import annotations

from pathlib import Path

from dbscale.plan.study import PrepareStep, RunStep, Step, estimate_s
from tests.plan.helpers import study_from_text

PLAN = """\
workload: {name: tpcb, params: {scale: 1}}
targets: [{name: db, url: "postgresql://u@h/db"}]
load: {duration: 10s}
matrix:
  clients: [1, 2, 3]
repeat: 2
warmup_runs: 1
warmup_duration: 2s
"""


def describe(steps: list[Step]) -> list[str]:
    return [s.key if isinstance(s, RunStep) else f"load({s.reason})" for s in steps]


def test_interleaved_order_with_point_warmups(tmp_path: Path) -> None:
    s = study_from_text(tmp_path, PLAN)
    assert describe(s.steps) == [
        "clients=1#warmup0", "clients=1#0", "clients=2#warmup0", "clients=2#0",
        "clients=3#warmup0", "clients=3#0", "clients=1#1", "clients=2#1", "clients=3#1",
    ]  # fmt: skip
    warmups = [r for r in s.steps if isinstance(r, RunStep) and r.warmup]
    assert all(r.duration_s == 2.0 for r in warmups)


def test_sequential_order(tmp_path: Path) -> None:
    s = study_from_text(tmp_path, PLAN + "order: sequential\n")
    assert describe(s.steps)[:3] == ["clients=1#warmup0", "clients=1#0", "clients=1#1"]


def test_fresh_load_reload_each_round_and_data_warmup(tmp_path: Path) -> None:
    text = PLAN.replace("warmup_runs: 1", "warmup_runs: 0") + (
        "prepare:\n  load: fresh\n  reload: round\n"
        "  warmup: {duration: 5s, workload: tpcb-select-only}\n"
    )
    s = study_from_text(tmp_path, text)
    data_warmup = "data-warmup:db:tpcb(scale=1)"
    assert describe(s.steps) == [
        "load(load)", f"{data_warmup}#0", "clients=1#0", "clients=2#0", "clients=3#0",
        "load(reload for round 2)", f"{data_warmup}#1", "clients=1#1", "clients=2#1",
        "clients=3#1",
    ]  # fmt: skip
    warm = next(r for r in s.steps if isinstance(r, RunStep) and r.kind == "data-warmup")
    assert warm.point.workload == "tpcb-select-only"
    assert warm.point.load.clients == 3  # the largest of the data set's points
    first_load = s.steps[0]
    assert isinstance(first_load, PrepareStep)
    assert first_load.serves == (f"{data_warmup}#0", "clients=1#0", "clients=2#0", "clients=3#0")


def test_data_sets_run_one_after_another(tmp_path: Path) -> None:
    s = study_from_text(tmp_path, PLAN.replace("clients: [1, 2, 3]", "scale: [1, 2]"))
    assert describe(s.steps) == [
        "scale=1#warmup0", "scale=1#0", "scale=1#1", "scale=2#warmup0", "scale=2#0", "scale=2#1",
    ]  # fmt: skip


def test_reload_before_every_run(tmp_path: Path) -> None:
    text = PLAN.replace("warmup_runs: 1", "warmup_runs: 0") + "prepare: {reload: run}\n"
    steps = describe(study_from_text(tmp_path, text).steps)
    assert steps[:4] == ["load(reload before the run)", "clients=1#0",
                         "load(reload before the run)", "clients=2#0"]  # fmt: skip


def test_resume_skips_recorded_runs_and_their_loads(tmp_path: Path) -> None:
    text = PLAN + "prepare:\n  load: fresh\n  reload: round\n"
    s = study_from_text(tmp_path, text)
    done = {"clients=1#warmup0", "clients=1#0", "clients=2#warmup0"}
    pending = describe(s.pending(done))
    assert pending == [
        "clients=2#0", "clients=3#warmup0", "clients=3#0",
        "load(reload for round 2)", "clients=1#1", "clients=2#1", "clients=3#1",
    ]  # fmt: skip
    assert describe(s.pending(set())) == describe(s.steps)


def test_estimate_counts_runs_overhead_and_cooldown(tmp_path: Path) -> None:
    s = study_from_text(tmp_path, PLAN + "cooldown: 30s\n")
    runs = [r for r in s.steps if isinstance(r, RunStep)]
    assert estimate_s(s.steps, 30.0) == 3 * 2.0 + 6 * 10.0 + 9 * 1.0 + 8 * 30.0
    assert len(runs) == 9
