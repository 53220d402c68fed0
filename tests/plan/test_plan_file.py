"""Plan files: parsing, overrides from the command line, and every refusal naming file and line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbscale.errors import ConfigError, PlanError
from dbscale.plan.build import RunOptions
from dbscale.plan.schema import Transport
from dbscale.plan.study import RunStep
from dbscale.targets import OpenTarget
from tests.plan.helpers import study, study_from_text

GOOD = """\
name: tls-sweep
targets:
  - name: db
    url: postgresql://bench@db1:5432/bench
    socket_dir: /var/run/postgresql
workload:
  name: tpcb
  params: {scale: 10}
load:
  clients: 4
  duration: 30s
matrix:
  clients: [1, 8]
  tls: [disable, require]
repeat: 3
cooldown: 5s
"""


def test_a_plan_file_becomes_a_study(tmp_path: Path) -> None:
    s = study_from_text(tmp_path, GOOD)
    assert s.plan.name == "tls-sweep"
    assert [p.key for p in s.points] == [
        "clients=1,tls=disable", "clients=1,tls=require",
        "clients=8,tls=disable", "clients=8,tls=require",
    ]  # fmt: skip
    assert s.plan.repeat == 3 and s.plan.cooldown == 5.0 and s.plan.warmup_runs == 1
    measured = [r for r in s.steps if isinstance(r, RunStep) and r.kind == "measured"]
    assert len(measured) == 12
    assert measured[0].point.params == {"scale": 10}
    assert measured[0].point.load.duration_s == 30.0
    assert s.out_dir.name.endswith("-tls-sweep")


def test_flags_and_set_override_plan_fields(tmp_path: Path) -> None:
    s = study_from_text(
        tmp_path,
        GOOD,
        clients=["2"],
        duration="1s",
        target="postgresql://other@db2/bench",
        set_params=["repeat=2", "scale=3", "matrix.tls=[disable]", "targets.db.socket_dir=/tmp"],
    )
    assert [p.key for p in s.points] == ["clients=2,tls=disable"]
    point = s.points[0]
    assert point.params == {"scale": 3}
    assert point.load.duration_s == 1.0
    assert s.plan.repeat == 2
    assert point.target.name == "db"
    assert point.target.url == "postgresql://other@db2/bench"
    assert point.target.socket_dir == "/tmp"  # kept from the plan, then overridden by --set


def test_transport_unix_uses_the_socket_directory(tmp_path: Path) -> None:
    s = study_from_text(tmp_path, GOOD.replace("tls: [disable, require]", "transport: [unix, tcp]"))
    unix = next(p for p in s.points if p.load.transport is Transport.UNIX)
    opened = OpenTarget(url=unix.target.url)
    assert unix.url(opened) == "postgresql://bench@/bench?host=/var/run/postgresql&port=5432"
    tcp = next(p for p in s.points if p.load.transport is Transport.TCP)
    assert tcp.url(opened) == "postgresql://bench@db1:5432/bench"


def refused(tmp_path: Path, text: str, line: int, needle: str, **options: object) -> PlanError:
    with pytest.raises(PlanError) as caught:
        study_from_text(tmp_path, text, **options)  # type: ignore[arg-type]
    message = caught.value.message
    assert re.search(rf"plan\.yaml:{line}:\d+: ", message), message
    assert needle in message, message
    assert caught.value.hint
    return caught.value


@pytest.mark.parametrize(
    ("old", "new", "line", "needle"),
    [
        ("repeat: 3", "repetas: 3", 15, "repetas: unknown key"),
        ("  clients: 4", "  clinets: 4", 10, "load.clinets: unknown key"),
        ("repeat: 3", "repeat: many", 15, "repeat: Input should be a valid integer"),
        ("  duration: 30s", "  duration: soon", 11, "load.duration"),
        ("  clients: [1, 8]", "  clientz: [1, 8]", 13, "unknown axis 'clientz'"),
        ("  clients: [1, 8]", "  clients: [1, x]", 13, "matrix.clients[1]"),
        ("  clients: [1, 8]", "  clients: []", 13, "has no values"),
        ("  clients: [1, 8]", "  clients: [1, 1]", 13, "repeats a value"),
        ("  tls: [disable, require]", "  tls: [disable, sometimes]", 14, "matrix.tls[1]"),
        ("  params: {scale: 10}", "  params: {scael: 10}", 8, "no parameter 'scael'"),
        ("  params: {scale: 10}", "  params: {scale: ten}", 8, "takes a int"),
        ("  name: tpcb", "  name: tpcc-ish", 7, "unknown workload"),
        ("    url: postgresql://bench@db1:5432/bench", "    url: mongodb://x/y", 4, "scheme"),
        ("cooldown: 5s", "cooldown: 5s\ncooldown: 6s", 17, "duplicate key"),
        ("cooldown: 5s", "cooldown: [5s", 17, ""),
    ],
)
def test_refusals_name_file_and_line(
    tmp_path: Path, old: str, new: str, line: int, needle: str
) -> None:
    assert old in GOOD
    refused(tmp_path, GOOD.replace(old, new), line, needle)


def test_empty_matrix_and_empty_plan(tmp_path: Path) -> None:
    text = GOOD.replace("  clients: [1, 8]\n  tls: [disable, require]\n", "  {}\n")
    refused(tmp_path, text.replace("matrix:\n  {}", "matrix: {}"), 12, "empty matrix")
    with pytest.raises(PlanError, match="empty"):
        study_from_text(tmp_path, "# nothing\n")


def test_zip_and_exclude_refusals(tmp_path: Path) -> None:
    zipped = GOOD.replace(
        "  tls: [disable, require]",
        "  zip:\n    - {connect: [persistent], tls: [disable, require]}",
    )
    refused(tmp_path, zipped, 15, "equal length")
    unknown = GOOD + "  exclude:\n    - {protocol: simple}\n".replace("  exclude", "")
    refused(
        tmp_path,
        GOOD.replace("repeat: 3", "  exclude: [{protocol: simple}]\nrepeat: 3"),
        15,
        "not an axis",
    )
    everything = GOOD.replace("repeat: 3", "  exclude: [{tls: [disable, require]}]\nrepeat: 3")
    refused(tmp_path, everything, 15, "no point")
    assert unknown


def test_impossible_points_are_refused(tmp_path: Path) -> None:
    tls_socket = GOOD.replace("  clients: [1, 8]", "  transport: [unix, tcp]")
    refused(tmp_path, tls_socket, 12, "cannot run over a Unix socket")
    no_socket = GOOD.replace("    socket_dir: /var/run/postgresql\n", "").replace(
        "  tls: [disable, require]", "  transport: [unix, tcp]"
    )
    error = refused(tmp_path, no_socket, 3, "no socket_dir")
    assert "targets.db.socket_dir" in error.hint


def test_workload_and_workloads(tmp_path: Path) -> None:
    both = GOOD.replace("workload:", "workloads: [tpcb]\nworkload:")
    refused(tmp_path, both, 1, "exactly one of")


def test_command_line_errors_name_the_option(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match=r"command line \(--set bogus\.key\)|bogus"):
        study_from_text(tmp_path, GOOD, set_params=["bogus.key=1"])
    with pytest.raises(PlanError, match=r"command line \(--set repeat\): repeat"):
        study_from_text(tmp_path, GOOD, set_params=["repeat=zero"])


def test_quick_needs_a_quick_section(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="no quick variant"):
        study_from_text(tmp_path, GOOD, quick=True)
    s = study_from_text(tmp_path, GOOD + "quick:\n  load.duration: 1s\n  repeat: 1\n", quick=True)
    assert s.plan.repeat == 1 and s.points[0].load.duration_s == 1.0


def test_resume_and_out_conflict(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="--resume and --out"):
        study_from_text(tmp_path, GOOD, out=tmp_path / "a", resume=tmp_path / "b")


def test_options_type() -> None:
    assert RunOptions(workload="plan.yaml").plan_path == Path("plan.yaml")
    assert RunOptions(workload="tpcb").plan_path is None


def test_hostile_plans_are_refused_before_they_expand(tmp_path: Path) -> None:
    bomb = (
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "workload: tpcb\n"
    )
    with pytest.raises(PlanError, match=r"plan\.yaml:2:8: YAML aliases \(\*a\) are not allowed"):
        study_from_text(tmp_path, bomb)
    values = ", ".join(str(n) for n in range(1, 201))
    wide = f"workload: tpcb\nmatrix:\n  clients: [{values}]\n  threads: [{values}]\n"
    with pytest.raises(PlanError, match=r"the matrix has 40,000 points \(200 x 200\), over the "):
        study_from_text(tmp_path, wide)
    huge = "workload: tpcb\n" + "# padding\n" * 110_000
    with pytest.raises(PlanError, match=r"over the 1,048,576 a plan may have"):
        study_from_text(tmp_path, huge)
    with pytest.raises(PlanError, match="the workload is empty"):
        study(RunOptions(workload=""))
    with pytest.raises(PlanError, match=r"--repeat: must be at most 1000"):
        study(RunOptions(workload="tpcb", repeat=1_000_000_000))


def test_a_value_the_core_refuses_names_its_point(tmp_path: Path) -> None:
    """Each point's workload is built by the core while planning, so a value out of range on
    one point of an axis stops the plan before any target starts."""
    text = """\
targets: [{name: db, url: "postgresql://u@127.0.0.1:1/x"}]
workload: {name: tpcc, params: {wait: false}}
load: {clients: 2, duration: 1s}
matrix: {warehouses: [1, 0]}
"""
    with pytest.raises(ConfigError, match=r"point warehouses=0: tpcc: warehouses must be 1-100000"):
        study_from_text(tmp_path, text)
    s = study_from_text(tmp_path, text.replace("[1, 0]", "[1, 2]"))
    assert [p.key for p in s.points] == ["warehouses=1", "warehouses=2"]
