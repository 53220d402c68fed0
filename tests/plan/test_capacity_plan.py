"""`dbscale capacity`'s flags become a plan's `capacity:` section: one model holds the defaults
and the checks, and a refusal names the flag (or the plan file's line) it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dbscale.cli.app import app
from dbscale.errors import PlanError
from dbscale.plan import objectives
from dbscale.plan.build import RunOptions
from dbscale.plan.capacity_plan import CapacityPlan
from dbscale.plan.objectives import Knob
from dbscale.plan.sources import CapacityFlags
from tests.plan.helpers import study, study_from_text

P99 = ("p99<=20ms",)


def searched(**flags: object) -> RunOptions:
    """The options `dbscale capacity tpcb ...` builds."""
    clients = flags.pop("clients", [])
    return RunOptions(workload="tpcb", clients=clients, repeat=1, warmup_runs=0, warmup="0",  # type: ignore[arg-type]
                      capacity=CapacityFlags(**flags))  # type: ignore[arg-type]  # fmt: skip


def test_flags_become_the_capacity_section_with_the_models_defaults() -> None:
    plan = study(searched(slo=P99)).plan
    assert plan.capacity == CapacityPlan(slo=list(P99))
    settings = plan.capacity.settings()
    assert (settings.settle_s, settings.measure_min_s, settings.measure_max_s) == (10, 30, 120)
    assert (settings.max_errors, settings.resolution, settings.confirm) == (0.001, 0.02, 3)
    assert settings.knob is Knob.RATE
    assert plan.load.clients == objectives.DEFAULT_RATE_CLIENTS
    closed = study(searched(slo=P99, knob="clients", settle="2s", confirm=1)).plan
    assert closed.load.clients == 1 and closed.capacity is not None
    assert (closed.capacity.settle, closed.capacity.confirm) == ("2s", 1)
    assert study(searched(slo=P99, clients=["4"])).plan.load.clients == 4


@pytest.mark.parametrize(
    ("flags", "message", "hint"),
    [({}, "--slo: a capacity search needs a latency objective", "--slo 'p99<=20ms'"),
     ({"slo": ["p99"]}, "--slo: 'p99' is not a latency objective", "pQ<=LIMIT"),
     ({"slo": P99, "measure": "5s..1s"}, "--measure: '5s..1s': the longest is shorter", "30s..2m"),
     ({"slo": P99, "measure": "5x"}, "--measure: '5x' is not a duration", "30s"),
     ({"slo": P99, "knob": "warp"}, "--knob: 'warp' is not rate, clients, warehouses or", "rate:"),
     ({"slo": P99, "resolution": "90%"}, "--resolution: '90%' must be from 0.1% to 50%", "2%"),
     ({"slo": P99, "max_errors": "abc"}, "--max-errors: 'abc' is not a share", "0.1%"),
     ({"slo": P99, "settle": "-1s"}, "--settle: ", "30s"),
     ({"slo": P99, "confirm": 21}, "--confirm: ", "dbscale capacity --help"),
     ({"slo": P99, "clients": ["1,2"]}, "searches one configuration; these options give 2",
      "one client count")],
)  # fmt: skip
def test_each_refusal_names_its_flag(flags: dict[str, object], message: str, hint: str) -> None:
    with pytest.raises(PlanError) as info:
        study(searched(**flags))
    assert info.value.message.startswith(message) or message in info.value.message
    assert hint in info.value.hint


def test_a_plan_files_section_is_checked_by_the_same_model(tmp_path: Path) -> None:
    text = "workload: tpcb\ncapacity:\n  slo: p99<=5ms\n  settle: soon\n"
    with pytest.raises(PlanError, match=r"plan.yaml:\d+:\d+: capacity.settle: 'soon' is not"):
        study_from_text(tmp_path, text)
    good = study_from_text(tmp_path, text.replace("soon", "3s"))
    assert good.plan.capacity is not None and good.plan.capacity.settings().settle_s == 3
    # the command line's flags go over the plan's section
    over = study_from_text(
        tmp_path, text.replace("soon", "3s"), capacity=CapacityFlags(settle="4s")
    )
    assert over.plan.capacity is not None and over.plan.capacity.settle == "4s"
    assert over.plan.capacity.slo == ["p99<=5ms"]


def test_capacity_help_states_the_models_defaults() -> None:
    text = " ".join(
        CliRunner().invoke(app, ["capacity", "--help"], terminal_width=200).output.split()
    )
    for default in (objectives.DEFAULT_SETTLE, objectives.DEFAULT_MEASURE,
                    objectives.DEFAULT_RESOLUTION, objectives.DEFAULT_MAX_ERRORS):  # fmt: skip
        assert f"default {default})" in text, default
    assert f"(default {objectives.DEFAULT_RATE_CLIENTS})" in text
    model = CapacityPlan(slo=["p99<=1ms"])
    assert (model.settle, model.measure, model.resolution, model.max_errors, model.confirm) == (
        objectives.DEFAULT_SETTLE, objectives.DEFAULT_MEASURE, objectives.DEFAULT_RESOLUTION,
        objectives.DEFAULT_MAX_ERRORS, objectives.DEFAULT_CONFIRM,
    )  # fmt: skip
