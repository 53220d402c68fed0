"""Scale-out's exact split of a run into workers' shares."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dbscale.config import RunConfig, TargetConfig, WorkloadConfig
from dbscale.errors import ConfigError
from dbscale.scaleout.split import split_evenly, split_run, worker_seed


def config(**fields: object) -> RunConfig:
    base = {"target": TargetConfig(url="postgresql://u@h/db"),
            "workload": WorkloadConfig(name="tpcc", params={"connections": 5})}  # fmt: skip
    return RunConfig(**{**base, **fields})  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=100_000), st.integers(min_value=1, max_value=64))
def test_shares_add_up_and_differ_by_one_at_most(total: int, parts: int) -> None:
    shares = split_evenly(total, parts)
    assert sum(shares) == total and len(shares) == parts
    assert max(shares) - min(shares) <= 1


def test_a_run_split_over_three_workers() -> None:
    run = config(clients=10, threads=4, rate_tps=1000.0, seed=42)
    shares = split_run(run, 3, 42)
    assert [s.clients for s in shares] == [4, 3, 3]
    assert [s.first_client for s in shares] == [0, 4, 7]  # contiguous ids: the run's terminals
    assert all(s.config.share is not None and s.config.share.total_clients == 10 for s in shares)
    assert [s.config.threads for s in shares] == [2, 1, 1]
    rates = [s.config.rate_tps for s in shares]
    assert rates == pytest.approx([400.0, 300.0, 300.0]) and sum(rates) == pytest.approx(1000.0)
    assert [s.config.workload.params["connections"] for s in shares] == [2, 2, 1]
    seeds = [s.config.seed for s in shares]
    assert len(set(seeds)) == 3 and seeds == [s.config.seed for s in split_run(run, 3, 42)]
    assert worker_seed(42, 0) != worker_seed(43, 0)


def test_more_workers_than_clients_is_refused() -> None:
    with pytest.raises(ConfigError, match="more than the run's 2 clients"):
        split_run(config(clients=2), 3, 1)
