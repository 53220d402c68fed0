from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from dbscale.config import ConnectMode, QueryProtocol, TlsMode
from dbscale.errors import ConfigError, DbscaleError
from dbscale.plan import (
    DEMO_CLIENTS,
    DEMO_WARMUP_S,
    RunOptions,
    build_data_plan,
    build_plan,
)
from dbscale.workloads import Catalog

CATALOG = Catalog.from_json(
    {
        "tpcb": {
            "description": "TPC-B-like",
            "aliases": ["tpcb-like"],
            "params": {"scale": {"default": 1, "doc": ""}, "vacuum": {"default": True, "doc": ""}},
        }
    }
)
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def plan(options: RunOptions, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return build_plan(options, load_catalog=lambda: CATALOG, env=env or {}, now=NOW)


def test_demo_defaults() -> None:
    p = plan(RunOptions())
    assert p.demo
    assert p.workload == "tpcb"
    assert p.target.embedded
    assert p.clients_levels == list(DEMO_CLIENTS)
    assert p.warmup_s == DEMO_WARMUP_S
    assert p.params["scale"] == 10
    runs = p.runs("postgresql://postgres@127.0.0.1:5/postgres")
    assert [r.warmup for r in runs] == [True, False, False, False]
    assert [r.config.clients for r in runs[1:]] == list(DEMO_CLIENTS)
    assert runs[0].config.duration_s == DEMO_WARMUP_S
    assert p.out_dir == Path("results/20250101T000000Z-tpcb")


def test_demo_options_can_be_overridden() -> None:
    p = plan(RunOptions(clients=["2"], duration="1s", warmup="1s", set_params=["scale=1"]))
    assert p.demo
    assert p.clients_levels == [2]
    assert p.params == {"scale": 1}


def test_named_workload_runs_once_without_warmup() -> None:
    p = plan(
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
    assert not p.demo
    assert p.workload == "tpcb"
    runs = p.runs(p.target.url or "")
    assert [r.warmup for r in runs] == [False, False]
    first = runs[0].config
    assert first.target.url == "postgresql://bob:pw@db/app"
    assert first.target.tls is TlsMode.REQUIRE
    assert first.protocol is QueryProtocol.PREPARED
    assert first.connect is ConnectMode.PER_TRANSACTION
    assert (first.clients, first.threads, first.seed, first.duration_s) == (1, 2, 7, 2.0)
    assert runs[1].config.clients == 4
    assert p.out_dir == Path("/tmp/x")


def test_warmup_uses_the_largest_level() -> None:
    p = plan(RunOptions(workload="tpcb", clients=["1,8,4"], warmup="2s"))
    assert p.runs("postgresql://x")[0].config.clients == 8


def test_plain_value_errors_come_before_the_catalog() -> None:
    def no_catalog() -> Catalog:
        raise AssertionError("the catalog must not be needed for this error")

    for options in (
        RunOptions(workload="tpcb", clients=["0"]),
        RunOptions(workload="tpcb", duration="soon"),
        RunOptions(workload="tpcb", threads=0),
        RunOptions(workload="tpcb", set_params=["noequals"]),
        RunOptions(workload="tpcb", target="mysql://x"),
    ):
        with pytest.raises(DbscaleError):
            build_plan(options, load_catalog=no_catalog, env={}, now=NOW)


def test_catalog_errors() -> None:
    with pytest.raises(ConfigError, match="unknown workload"):
        plan(RunOptions(workload="nope"))
    with pytest.raises(ConfigError, match="no parameter 'scael'"):
        plan(RunOptions(workload="tpcb", set_params=["scael=1"]))


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
    config = data.config("postgresql://postgres@127.0.0.1:1/postgres")
    assert config.workload.name == "tpcb"
    assert config.workload.params == {"scale": 3}
