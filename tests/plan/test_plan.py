"""`dbscale run` without a plan file: flags become a one-axis study (the same planner)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.core.config import ConnectMode, QueryProtocol, TlsMode
from dbscale.errors import ConfigError, DbscaleError
from dbscale.plan.build import (
    DEMO_CLIENTS,
    DEMO_WARMUP_S,
    RunOptions,
    build_data_plan,
    build_study,
)
from dbscale.plan.catalog import Catalog
from dbscale.plan.study import PrepareStep, RunStep
from dbscale.targets import OpenTarget
from tests.plan.helpers import CATALOG, NOW, study

URL = "postgresql://postgres@127.0.0.1:5/postgres"


def runs(s: object) -> list[RunStep]:
    return [step for step in s.steps if isinstance(step, RunStep)]  # type: ignore[attr-defined]


def test_demo_defaults() -> None:
    s = study(RunOptions())
    assert s.demo
    assert [t.name for t in s.targets] == ["embedded"]
    steps = runs(s)
    assert [r.kind for r in steps] == ["data-warmup", "measured", "measured", "measured"]
    assert [r.point.load.clients for r in steps] == [max(DEMO_CLIENTS), *DEMO_CLIENTS]
    assert steps[0].duration_s == DEMO_WARMUP_S
    assert steps[1].point.params == {"scale": 10}
    assert [r.point.key for r in steps[1:]] == ["clients=1", "clients=4", "clients=8"]
    assert s.out_dir == Path("results/20250101T000000Z-tpcb")
    assert not any(isinstance(step, PrepareStep) for step in s.steps)


def test_demo_options_can_be_overridden() -> None:
    s = study(RunOptions(clients=["2"], duration="1s", warmup="1s", set_params=["scale=1"]))
    assert s.demo
    assert [r.point.load.clients for r in runs(s)] == [2, 2]
    assert runs(s)[1].point.params == {"scale": 1}
    assert runs(s)[1].point.key == "default"


def test_warmup_zero_is_no_warmup_run() -> None:
    for zero in ("0", "0s", " 0ms "):
        s = study(RunOptions(clients=["2"], duration="1s", warmup=zero))
        assert s.demo
        assert [r.kind for r in runs(s)] == ["measured"], zero
    with pytest.raises(ConfigError, match="--warmup"):
        study(RunOptions(clients=["2"], duration="1s", warmup="-1s"))


def test_named_workload_runs_once_without_warmup() -> None:
    s = study(
        RunOptions(
            workload="tpcb-like",
            target="postgresql://bob@db/app",
            clients=["1,4"],
            duration="2s",
            protocol=QueryProtocol.PREPARED,
            connect=ConnectMode.PER_TRANSACTION,
            tls=TlsMode.REQUIRE,
            threads=2,
            seed=7,
            out=Path("/tmp/x"),
        ),
        env={"PGPASSWORD": "pw"},
    )
    assert not s.demo
    steps = runs(s)
    assert [r.warmup for r in steps] == [False, False]
    opened = OpenTarget(url=s.targets[0].url)
    first = steps[0].point.run_config(opened)
    assert first.target.url == "postgresql://bob:pw@db/app"
    assert first.target.tls is TlsMode.REQUIRE
    assert first.protocol is QueryProtocol.PREPARED
    assert first.connect is ConnectMode.PER_TRANSACTION
    assert first.workload.name == "tpcb"
    assert (first.clients, first.threads, first.seed, first.duration_s) == (1, 2, 7, 2.0)
    assert steps[1].point.load.clients == 4
    assert s.out_dir == Path("/tmp/x")


def test_warmup_uses_the_largest_client_count_and_repeat_interleaves() -> None:
    s = study(RunOptions(workload="tpcb", clients=["1,8,4"], warmup="2s", repeat=2))
    steps = runs(s)
    assert steps[0].kind == "data-warmup" and steps[0].point.load.clients == 8
    assert [r.key for r in steps[1:]] == [
        "clients=1#0", "clients=8#0", "clients=4#0", "clients=1#1", "clients=8#1", "clients=4#1",
    ]  # fmt: skip


def test_plain_value_errors_come_before_the_catalog() -> None:
    def no_catalog() -> Catalog:
        raise AssertionError("the catalog must not be needed for this error")

    for options in (
        RunOptions(workload="tpcb", clients=["0"]),
        RunOptions(workload="tpcb", duration="soon"),
        RunOptions(workload="tpcb", threads=0),
        RunOptions(workload="tpcb", set_params=["noequals"]),
        RunOptions(workload="tpcb", target="mongodb://x"),
        RunOptions(workload="tpcb", repeat=0),
    ):
        with pytest.raises(DbscaleError):
            build_study(options, load_catalog=no_catalog, env={}, now=NOW)


def test_catalog_errors() -> None:
    with pytest.raises(ConfigError, match="unknown workload"):
        study(RunOptions(workload="nope"))
    with pytest.raises(ConfigError, match="no parameter 'scael'"):
        study(RunOptions(workload="tpcb", set_params=["scael=1"]))


def test_data_plan() -> None:
    data = build_data_plan(
        "tpcb-like",
        target=None,
        set_params=["scale=3"],
        tls=None,
        load_catalog=lambda: CATALOG,
        env={},
    )
    assert data.target.embedded
    config = data.config(URL)
    assert config.workload.name == "tpcb"
    assert config.workload.params == {"scale": 3}


def test_more_workers_than_a_points_clients_is_refused_while_planning() -> None:
    with pytest.raises(ConfigError, match=r"point clients=2: --workers 3 is more than the run's 2"):
        study(RunOptions(workload="tpcb", clients=["4,2"], workers=3))
    assert len(study(RunOptions(workload="tpcb", clients=["4,3"], workers=3)).points) == 2
