"""`dbscale micro cpu`: both modes measured, intervals from 6 runs, bad input refused."""

from __future__ import annotations

import json
import os

import pytest

from dbscale.cli.app import run_cli
from dbscale.errors import ConfigError
from dbscale.micro.cpu import measure


def test_one_thread_and_every_cpu_are_measured() -> None:
    result = measure(2, 0.05).record()
    assert result["threads"] == len(os.sched_getaffinity(0))
    for mode in ("single", "multi", "per_vcpu"):
        figures = result[mode]
        assert isinstance(figures, dict)
        assert len(figures["runs"]) == 2 and figures["median"] > 0
        assert figures["ci_low"] is None  # 2 runs: no interval for a median
    multi, per_vcpu = result["multi"], result["per_vcpu"]
    assert isinstance(multi, dict) and isinstance(per_vcpu, dict)
    assert per_vcpu["median"] == pytest.approx(multi["median"] / result["threads"])
    assert "not CoreMark" in str(result["kernels"])


def test_six_runs_give_the_median_an_interval(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["micro", "cpu", "-n", "6", "--seconds", "0.05", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    single = result["single"]
    assert single["ci_low"] <= single["median"] <= single["ci_high"]
    assert single["cv_pct"] is not None


def test_bad_input_is_refused() -> None:
    with pytest.raises(ConfigError, match="--repetitions"):
        measure(0, 1.0)
    with pytest.raises(ConfigError, match=r"--seconds: must be from 0\.01 to 3600"):
        measure(1, 0.0)
    assert run_cli(["micro", "cpu", "--seconds", "0"]) == 2
    assert run_cli(["micro", "cpu", "--seconds", "1e9"]) == 2
