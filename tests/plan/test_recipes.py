"""The bundled recipes: listed, valid in full and quick form, with the seeds' parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.cli.app import run_cli
from dbscale.errors import PlanError
from dbscale.plan.build import RunOptions
from dbscale.plan.micro_steps import MicroStep
from dbscale.plan.recipes import recipe_names
from dbscale.plan.study import RunStep
from tests.plan.helpers import study


def test_the_recipes_are_bundled() -> None:
    assert recipe_names() == [
        "capacity-by-size", "ch-htap", "cloud-report", "cloud-report-capacity",
        "cloud-report-nodes", "cloud-report-oltp", "cloudsql-pg-scaling", "ha-failover",
        "mysql-write-editions", "socket-vs-tcp", "tpch-streams", "ycsb-core",
    ]  # fmt: skip


# Recipes whose targets are clusters dbscale runs: built as written (a --target would drop
# the clusters their fault steps act on).
CLUSTER_RECIPES = ("cloud-report-nodes", "ha-failover")


@pytest.mark.parametrize("name", recipe_names())
@pytest.mark.parametrize("quick", [False, True])
def test_every_recipe_builds(name: str, quick: bool) -> None:
    if name in CLUSTER_RECIPES:
        s = study(RunOptions(recipe=name, quick=quick))
    else:
        s = study(RunOptions(recipe=name, quick=quick, target="postgresql://u@h/db",
                             set_params=["targets.main.socket_dir=/tmp", "targets.main.vcpus=2",
                                         "targets.main.host.command=ssh h dbscale",
                                         "targets.main.host.disk_dir=/data/fio"]))  # fmt: skip
    assert s.runnable_points
    measured = [r for r in s.steps if isinstance(r, RunStep) and r.kind == "measured"]
    assert measured
    if quick and s.plan.capacity is None:
        assert sum(r.duration_s for r in s.steps if isinstance(r, RunStep)) < 120


def test_seed_parameters_as_written() -> None:
    scaling = study(RunOptions(recipe="cloudsql-pg-scaling"))
    point = scaling.runnable_points[0]
    assert point.params == {"scale": 100} and point.load.threads == 8
    assert point.load.duration_s == 300
    assert scaling.plan.repeat == 5 and scaling.plan.warmup_runs == 1
    assert {p.load.clients for p in scaling.runnable_points} == {50, 100, 200, 300, 400, 500}
    editions = study(RunOptions(recipe="mysql-write-editions", target=[
        "ee=postgresql://u@a/db", "eeplus-ow0=postgresql://u@b/db", "eeplus-ow1=postgresql://u@c/db",
    ]))  # fmt: skip
    assert {p.load.clients for p in editions.runnable_points} == {128, 256, 512}
    assert {p.target.name for p in editions.runnable_points} == {"ee", "eeplus-ow0", "eeplus-ow1"}
    assert editions.runnable_points[0].params == {"tables": 100, "table_size": 12_000_000}
    assert editions.plan.prepare.warmup is not None
    assert editions.plan.prepare.warmup.workload == "sysbench:oltp_update_index"
    socket = study(RunOptions(recipe="socket-vs-tcp"))
    assert [p.key for p in socket.points] == ["transport=unix", "transport=tcp"]
    assert socket.points[0].load.clients == 5 and socket.points[0].load.threads == 1


def test_recipes_command_and_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["recipes"]) == 0
    out = capsys.readouterr().out
    assert "socket-vs-tcp" in out and "002" in out
    assert run_cli(["run", "--recipe", "nope", "--dry-run"]) == 2
    assert "unknown recipe" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["cloud-report-oltp", "cloudsql-pg-scaling"])
def test_quick_sweeps_local_sizes_unless_a_target_is_given(name: str) -> None:
    local = study(RunOptions(recipe=name, quick=True))
    assert {(p.target.url, p.target.vcpus) for p in local.runnable_points} == {
        ("local", 1), ("local", 2),
    }  # fmt: skip
    assert all(p.target.prices is not None for p in local.runnable_points)
    given = study(RunOptions(recipe=name, quick=True, target="postgresql://u@h/db",
                             set_params=["targets.main.vcpus=4"]))  # fmt: skip
    assert {(p.target.url, p.target.vcpus) for p in given.runnable_points} == {
        ("postgresql://u@h/db", 4),
    }  # fmt: skip
    assert all(p.target.prices is None and p.target.local is None for p in given.runnable_points)


def test_cloud_report_adds_the_micro_benchmarks_per_host() -> None:
    quick = study(RunOptions(recipe="cloud-report", quick=True))
    micro = [s for s in quick.steps if isinstance(s, MicroStep)]
    assert [(s.place, s.kind) for s in micro] == [
        (f"main-{n}vcpu", kind) for n in (1, 2) for kind in ("cpu", "disk", "net")
    ]
    assert sum(s.estimate_s for s in micro) < 120  # the runs take about as long again
    full = study(RunOptions(recipe="cloud-report", target="m=postgresql://u@n1/db", set_params=[
        "targets.m.vcpus=8", "targets.m.host.command=ssh n1 dbscale",
        "targets.m.host.disk_dir=/mnt/data1/fio"]))  # fmt: skip
    settings = full.plan.micro
    assert settings is not None and settings.cpu is not None and settings.disk is not None
    assert (settings.cpu.repetitions, settings.disk.runtime, len(settings.disk.job_names)) == (
        10,
        120.0,
        10,
    )  # the report's 10 CoreMark runs and fio.cfg's ten 2-minute jobs
    assert settings.net is not None and (settings.net.seconds, settings.net.step) == (60.0, 180.0)
    with pytest.raises(PlanError, match=r"give targets\.m\.host\.command"):
        study(RunOptions(recipe="cloud-report", target="m=postgresql://u@n1/db"))


def test_the_eta_includes_the_data_loads() -> None:
    from dbscale.plan.study import data_loads
    from dbscale.run.study_output import eta_text

    editions = study(RunOptions(recipe="mysql-write-editions", target="ee=mysql://u@h/db"))
    certain, _ = data_loads(editions.steps, editions.plan.prepare.load)
    assert len(certain) == 4 and sum(e.amount for e in certain) == 4 * 100 * 12_000_000
    text = eta_text(editions.steps, editions.plan.prepare.load, editions.plan.cooldown)
    assert text.startswith("13h10m of runs + ~2h4") and "4.8 billion rows" in text, text
    oltp = study(RunOptions(recipe="cloud-report-oltp", target="m=postgresql://u@h/db",
                            set_params=["targets.m.vcpus=8"]))  # fmt: skip
    text = eta_text(oltp.steps, oltp.plan.prepare.load, oltp.plan.cooldown)
    assert text.startswith("11h40m of runs + up to ~20m") and "1,200 warehouses" in text, text


def test_a_capacity_plan_searches_each_point(capsys: pytest.CaptureFixture[str]) -> None:
    sized = study(RunOptions(recipe="capacity-by-size", quick=True))
    capacity = sized.plan.capacity
    assert capacity is not None
    settings = capacity.settings()
    assert [o.text for o in settings.objectives] == ["p99<=50ms"]
    assert (settings.measure_min_s, settings.measure_max_s, settings.confirm) == (4.0, 8.0, 1)
    assert len(sized.runnable_points) == 2
    assert run_cli(["run", "--recipe", "capacity-by-size", "--quick", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "capacity: each point searched by rate for its highest load within p99<=50ms" in out
    assert "a search" in out and "runs:" not in out


def test_a_bad_capacity_section_is_refused_with_its_place(tmp_path: Path) -> None:
    from tests.plan.helpers import plan_file

    plan = plan_file(tmp_path, "workload: tpcb\ncapacity: {slo: []}\n")
    with pytest.raises(PlanError, match=r"capacity\.slo"):
        study(RunOptions(workload=str(plan)))


def test_the_cluster_recipes_say_what_their_seeds_did() -> None:
    nodes = study(RunOptions(recipe="cloud-report-nodes"))
    small, large = (p.target for p in nodes.runnable_points)
    assert (small.node_count, small.vcpus, large.node_count, large.vcpus) == (3, 0.5, 1, 1.5)
    assert small.vcpu_count == large.vcpu_count == 1.5  # the same total vCPUs
    point = nodes.runnable_points[0]
    assert point.params["wait"] is False and point.params["warehouses"] == 24
    # 4 connections per vCPU of each node: 4 x 0.5 x 3 nodes, and 4 x 1.5 x 1 node.
    assert {p.target.name: p.params["connections"] for p in nodes.runnable_points} == {
        "small": 6, "large": 6,
    }  # fmt: skip
    assert point.load.clients == 24 and point.load.duration_s == 1800
    assert [p.load.clients for p in study(RunOptions(recipe="cloud-report-nodes", quick=True))
            .runnable_points] == [3, 3]  # fmt: skip
    ha = study(RunOptions(recipe="ha-failover", quick=True))
    keys = [p.key for p in ha.runnable_points]
    assert keys == [
        "target=single,faults=none", "target=single,faults=restart", "target=sync,faults=none",
        "target=sync,faults=restart", "target=sync,faults=primary-loss",
    ]  # fmt: skip
    loss = ha.runnable_points[-1]
    assert [(s.action, s.node, s.at_s) for s in loss.faults] == [
        ("kill", "primary", 3.0), ("promote", "standby", 4.0),
    ]  # fmt: skip
    assert loss.load.transaction_timeout_s == 3.0
    assert ha.runnable_points[0].faults == ()


def test_fault_steps_are_refused_where_they_cannot_act() -> None:
    with pytest.raises(PlanError, match="not `url: local-cluster`"):
        study(RunOptions(recipe="ha-failover", target=[
            "single=postgresql://u@h/db", "sync=postgresql://u@h/db,postgresql://u@i/db",
        ]))  # fmt: skip


def test_quick_scaling_has_the_runs_its_own_size_comparisons_need() -> None:
    """The headline compares the 2-vCPU target with the 1-vCPU one at each of its other
    settings, Holm-corrected: the runs a side must be able to reach significance (issue 42)."""
    from dbscale.stats.comparison import min_runs_per_side

    quick = study(RunOptions(recipe="cloudsql-pg-scaling", quick=True))
    sizes = {p.target.vcpus for p in quick.runnable_points}
    comparisons = len(quick.runnable_points) // len(sizes) * (len(sizes) - 1)
    assert quick.plan.repeat >= min_runs_per_side(comparisons), (comparisons, quick.plan.repeat)
