"""Fault steps in plans: written as `{at: 10s, kill: n2}`, picked by the matrix's `faults`
axis, checked against their target (a local cluster's nodes, promotion on PostgreSQL only,
within the measured run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.errors import PlanError
from dbscale.plan.build import RunOptions
from dbscale.plan.faults import FaultStep
from tests.plan.helpers import study

TARGET = """\
targets:
  - name: g
    url: local-cluster
    nodes: 3
    local: {engine: mariadb-galera}
workload: {name: tpcb}
load: {duration: 10s}
"""


def _plan(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def test_a_step_names_its_action_and_node() -> None:
    step = FaultStep.model_validate({"at": "1500ms", "kill": "n2"})
    assert (step.at_s, step.action, step.node, step.label) == (1.5, "kill", "n2", "kill n2 at 1.5s")
    assert step.node_index(0, 1) == 1
    assert FaultStep.model_validate({"at": 3, "promote": "standby"}).node_index(0, 2) == 2
    with pytest.raises(ValueError, match="one ACTION"):
        FaultStep.model_validate({"at": 1, "kill": "n1", "stop": "n2"})
    with pytest.raises(ValueError):
        FaultStep.model_validate({"at": 1, "kill": "n0"})


def test_named_scenarios_are_a_matrix_axis(tmp_path: Path) -> None:
    plan = _plan(tmp_path, TARGET + "faults:\n  none: []\n  kill: [{at: 2s, kill: n2}, "
                 "{at: 5s, start: n2}]\n")  # fmt: skip
    points = study(RunOptions(workload=str(plan))).points
    assert [p.key for p in points] == ["faults=none", "faults=kill"]
    assert points[0].faults == ()
    assert [(s.action, s.node) for s in points[1].faults] == [("kill", "n2"), ("start", "n2")]
    assert points[0].fingerprint != points[1].fingerprint


def test_named_scenarios_without_an_axis_are_never_silently_dropped(tmp_path: Path) -> None:
    """Named scenarios and a matrix without a `faults` axis (issue 40): two or more make the
    axis themselves, crossed with the matrix; a single one applies to every point."""
    both = _plan(tmp_path, TARGET + "matrix: {clients: [1, 2]}\nfaults:\n  none: []\n"
                 "  kill: [{at: 2s, kill: n2}]\n")  # fmt: skip
    points = study(RunOptions(workload=str(both))).points
    assert sorted(p.key for p in points) == [
        "faults=kill,clients=1", "faults=kill,clients=2", "faults=none,clients=1",
        "faults=none,clients=2",
    ]  # fmt: skip
    assert all(bool(p.faults) == ("kill" in p.key) for p in points)
    one = _plan(tmp_path, TARGET + "matrix: {clients: [1, 2]}\nfaults:\n"
                "  kill: [{at: 2s, kill: n2}]\n")  # fmt: skip
    assert all(p.faults for p in study(RunOptions(workload=str(one))).points)


@pytest.mark.parametrize(
    ("faults", "message"),
    [
        ("[{at: 2s, kill: n4}]", "has 3 node"),
        ("[{at: 2s, promote: n2}]", "only a PostgreSQL standby"),
        ("[{at: 2s, kill: primary}]", "every node of a mariadb-galera cluster takes writes"),
        ("[{at: 12s, kill: n2}]", "the measured run lasts 10 s"),
    ],
)
def test_impossible_steps_are_refused(tmp_path: Path, faults: str, message: str) -> None:
    plan = _plan(tmp_path, TARGET + f"faults: {faults}\n")
    with pytest.raises(PlanError, match=message):
        study(RunOptions(workload=str(plan)))


def test_steps_need_a_cluster_dbscale_runs(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "targets: [{name: r, url: 'mysql://u@a/db,mysql://u@b/db'}]\n"
                 "workload: {name: tpcb}\nfaults: [{at: 1s, kill: n2}]\n")  # fmt: skip
    with pytest.raises(PlanError, match="not `url: local-cluster`"):
        study(RunOptions(workload=str(plan)))
