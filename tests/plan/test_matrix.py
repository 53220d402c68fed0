"""Matrix expansion: the full product, zipped axes, excludes, implicit target/workload axes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.core.config import ConnectMode, TlsMode
from dbscale.errors import PlanError
from tests.plan.helpers import study_from_text

BASE = """\
targets:
  - {name: a, url: "postgresql://u@h1/db"}
  - {name: b, url: "postgresql://u@h2/db"}
workload: {name: tpcb, params: {scale: 1}}
"""


def keys(tmp_path: Path, matrix: str) -> list[str]:
    return [p.key for p in study_from_text(tmp_path, BASE + matrix).points]


def test_full_product_first_axis_slowest_with_targets_implicit(tmp_path: Path) -> None:
    got = keys(tmp_path, "matrix:\n  clients: [1, 2]\n  tls: [disable, require]\n")
    assert got == [
        f"target={t},clients={c},tls={tls}"
        for t in "ab"
        for c in (1, 2)
        for tls in ("disable", "require")
    ]


def test_target_axis_can_select_targets(tmp_path: Path) -> None:
    assert keys(tmp_path, "matrix:\n  target: [b]\n  clients: [1, 2]\n") == [
        "target=b,clients=1",
        "target=b,clients=2",
    ]


def test_zip_varies_axes_together(tmp_path: Path) -> None:
    matrix = """matrix:
  target: [a]
  clients: [4, 8]
  zip:
    - connect: [persistent, per-transaction, persistent]
      tls: [disable, disable, require]
"""
    s = study_from_text(tmp_path, BASE + matrix)
    combos = [(p.load.clients, p.load.connect, p.load.tls) for p in s.points]
    assert combos == [
        (c, connect, tls)
        for c in (4, 8)
        for connect, tls in (
            (ConnectMode.PERSISTENT, TlsMode.DISABLE),
            (ConnectMode.PER_TRANSACTION, TlsMode.DISABLE),
            (ConnectMode.PERSISTENT, TlsMode.REQUIRE),
        )
    ]


def test_excludes_remove_matching_points(tmp_path: Path) -> None:
    matrix = """matrix:
  clients: [1, 2, 4]
  scale: [1, 10]
  exclude:
    - {target: b, scale: 10}
    - {clients: [2, 4], scale: 1}
"""
    got = keys(tmp_path, matrix)
    assert got == [
        "target=a,clients=1,scale=1",
        "target=a,clients=1,scale=10",
        "target=a,clients=2,scale=10",
        "target=a,clients=4,scale=10",
        "target=b,clients=1,scale=1",
    ]
    s = study_from_text(tmp_path, BASE + matrix)
    assert s.points[1].params == {"scale": 10}


def test_workloads_list_is_an_implicit_axis(tmp_path: Path) -> None:
    text = BASE.replace(
        "workload: {name: tpcb, params: {scale: 1}}",
        "workloads: [tpcb, {name: tpcb-select-only, label: ro}]",
    )
    s = study_from_text(tmp_path, text + "matrix:\n  target: [a]\n")
    assert [p.key for p in s.points] == ["workload=tpcb,target=a", "workload=ro,target=a"]
    assert [p.workload for p in s.points] == ["tpcb", "tpcb-select-only"]


def test_durations_and_switches_are_canonical(tmp_path: Path) -> None:
    text = BASE + "matrix:\n  target: [a]\n  duration: [90s, 2m]\n  pooling: [off]\n"
    s = study_from_text(
        tmp_path, text.replace("{name: b,", "{name: b, pooled_url: 'postgresql://p@h/db',")
    )
    assert [p.key for p in s.points] == [
        "target=a,duration=90s,pooling=off",
        "target=a,duration=2m,pooling=off",
    ]
    assert [p.load.duration_s for p in s.points] == [90.0, 120.0]


def test_pooling_without_a_pooler_is_skipped_with_a_reason(tmp_path: Path) -> None:
    s = study_from_text(tmp_path, BASE + "matrix:\n  pooling: [off, on]\n")
    skipped = {p.key: p.skipped for p in s.points if p.skipped}
    assert set(skipped) == {"target=a,pooling=on", "target=b,pooling=on"}
    assert "no pooled_url" in skipped["target=a,pooling=on"]
    assert len(s.runnable_points) == 2


def test_a_local_postgresql_target_gets_its_own_pooler(tmp_path: Path) -> None:
    local = """\
targets:
  - {name: pg, url: local}
  - {name: maria, url: local, local: {engine: mariadb}}
  - {name: remote, url: "postgresql://u@h1/db"}
workload: {name: tpcb, params: {scale: 1}}
matrix:
  pooling: [off, on]
"""
    s = study_from_text(tmp_path, local)
    skipped = {p.key: p.skipped for p in s.points if p.skipped}
    assert set(skipped) == {"target=maria,pooling=on", "target=remote,pooling=on"}
    # Every point of the local PostgreSQL target, pooled or not, enters it with its pooler.
    assert {p.key: p.target.pooler for p in s.runnable_points} == {
        "target=pg,pooling=off": "pgbouncer", "target=pg,pooling=on": "pgbouncer",
        "target=maria,pooling=off": None, "target=remote,pooling=off": None,
    }  # fmt: skip
    assert [t.name for t in s.targets if t.pooler] == ["pg"]


def test_a_pooler_is_for_local_targets_only(tmp_path: Path) -> None:
    text = BASE.replace(
        'url: "postgresql://u@h1/db"}', 'url: "postgresql://u@h1/db", pooler: pgbouncer}'
    )
    with pytest.raises(PlanError, match="pooler: pgbouncer starts a private PgBouncer"):
        study_from_text(tmp_path, text)
    maria = BASE.replace(
        'url: "postgresql://u@h1/db"}', "url: local, local: {engine: mariadb}, pooler: pgbouncer}"
    )
    with pytest.raises(PlanError, match="in front of a local PostgreSQL target"):
        study_from_text(tmp_path, maria)
