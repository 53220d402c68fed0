"""Each run setting is declared once per language: the core's `RunSettings` (its Rust twin is held
to it by tests/core/test_contract.py), and from it the plan's load settings, the matrix axes,
`--set` and the `dbscale run` flag. A setting added to the model without a flag, or a flag that
does not reach the plan, fails here."""

from __future__ import annotations

import pytest
import typer

from dbscale.cli.app import app
from dbscale.core.config import RunSettings, option_name
from dbscale.plan.document import PlanDocument
from dbscale.plan.schema import LOAD_FIELD_BY_NAME, LOAD_FIELDS, LoadSettings
from dbscale.plan.sources import RunOptions, apply_flags

# One value each flag takes, as typed on the command line.
TYPED = {
    "protocol": "prepared",
    "connect": "per-transaction",
    "clients": ["3"],
    "threads": 2,
    "duration": "7s",
    "ramp": "2s",
    "rate": 50.0,
    "max_tries": 4,
    "transactions": 9,
    "seed": 11,
    "interval": "500ms",
    "latency_limit": 5.0,
    "log": True,
    "transaction_timeout": "5s",
}


def _run_flags() -> set[str]:
    command = typer.main.get_command(app)
    run = command.commands["run"]  # type: ignore[attr-defined]
    return {flag for param in run.params for flag in getattr(param, "opts", [])}


@pytest.mark.parametrize("field", list(RunSettings.model_fields))
def test_every_run_setting_is_a_load_setting_an_axis_and_a_flag(field: str) -> None:
    plan_name = RunSettings.plan_names()[field]
    assert plan_name in LOAD_FIELDS and LOAD_FIELD_BY_NAME[plan_name] == field
    assert field in LoadSettings.model_fields
    assert option_name(plan_name) in _run_flags()
    assert plan_name in TYPED, f"add {plan_name} to TYPED: the test checks its flag reaches a plan"


@pytest.mark.parametrize("plan_name", list(TYPED))
def test_each_flag_reaches_the_plans_load_settings(plan_name: str) -> None:
    doc = PlanDocument({"load": {}}, "test", {(): "test"})
    apply_flags(doc, RunOptions(**{plan_name: TYPED[plan_name]}), plain=True)  # type: ignore[arg-type]
    if plan_name == "clients":
        assert doc.get(("load", "clients")) == 3
        return
    assert doc.get(("load", plan_name)) is not None
    load = LoadSettings.model_validate(doc.get(("load",)))
    assert getattr(load, LOAD_FIELD_BY_NAME[plan_name]) != LoadSettings.model_fields[
        LOAD_FIELD_BY_NAME[plan_name]
    ].get_default(call_default_factory=True)


def test_a_plan_names_settings_as_it_always_did() -> None:
    load = LoadSettings.model_validate({"duration": "2m", "rate": 10, "ramp": 0})
    assert (load.duration_s, load.rate_tps, load.ramp_s) == (120.0, 10.0, 0.0)
    dumped = load.model_dump(mode="json")
    assert dumped["duration"] == 120.0 and "duration_s" not in dumped


def test_the_interval_is_in_a_points_fingerprint_unless_at_its_default() -> None:
    from tests.plan.helpers import study

    target = "postgresql://u@h/db"
    [plain] = study(RunOptions(workload="tpcb", target=target)).points
    [halved] = study(RunOptions(workload="tpcb", target=target, interval="500ms")).points
    assert halved.load.interval_s == 0.5
    assert halved.fingerprint != plain.fingerprint  # a resume will not mix them
    # At its default it is left out, so a study begun before the setting resumes as it was;
    # so are the settings added later.
    unprinted = plain.load.model_dump(exclude=plain._unfingerprinted())
    for later in ("interval", "latency_limit", "log", "sampling_rate"):
        assert later not in unprinted
    [limited] = study(RunOptions(workload="tpcb", target=target, latency_limit=5.0)).points
    assert limited.fingerprint != plain.fingerprint
