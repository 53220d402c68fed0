"""Python's models against the core's own contract (`_core.contract()`): they agree now, and the
comparison notices each kind of drift (a field missing or added on either side, a bound, a
default, a nested part, an error kind Python does not map)."""

from __future__ import annotations

import copy
import json
from types import ModuleType
from typing import Any

import pytest

from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig
from dbscale.core.contract import differences
from dbscale.errors import InternalError, error_class_for_kind


@pytest.fixture(scope="module")
def contract(core: ModuleType) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(core.contract())
    return document


def test_python_and_the_core_agree(contract: dict[str, Any]) -> None:
    assert differences(contract) == []


def _drifted(contract: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(contract)


def test_a_result_field_python_lacks_is_found(contract: dict[str, Any]) -> None:
    drifted = _drifted(contract)
    drifted["result"]["properties"]["queue_depth"] = {"type": "integer", "format": "uint64"}
    assert differences(drifted) == ["result.queue_depth: in the core, missing in Python"]


def test_a_field_the_core_dropped_is_found(contract: dict[str, Any]) -> None:
    drifted = _drifted(contract)
    del drifted["answers"]["probe"]["properties"]["tls"]
    assert differences(drifted) == ["probe.tls: in Python, unknown to the core"]


def test_a_nested_part_is_compared_too(contract: dict[str, Any]) -> None:
    drifted = _drifted(contract)
    summary = drifted["result"]["definitions"]["LatencySummary"]
    summary["properties"]["p9999"] = summary["properties"]["p999"]
    found = differences(drifted)
    assert "result.latency_ms.p9999: in the core, missing in Python" in found


def test_a_bound_and_a_default_that_differ_are_found(contract: dict[str, Any]) -> None:
    drifted = _drifted(contract)
    drifted["config"]["properties"]["clients"]["maximum"] = 50_000
    drifted["config"]["properties"]["duration_s"]["default"] = 10.0
    assert differences(drifted) == [
        "config.clients: bounds [1, 100000] in Python, [1, 50000] in the core",
        "config.duration_s: default 30.0 in Python, 10.0 in the core",
    ]


def test_a_type_that_differs_is_found(contract: dict[str, Any]) -> None:
    drifted = _drifted(contract)
    drifted["answers"]["micro_cpu"]["properties"]["iterations"] = {"type": "number"}
    assert differences(drifted) == ["micro_cpu.iterations: integer in Python, number in the core"]


def test_a_core_document_python_has_no_model_for_is_found(contract: dict[str, Any]) -> None:
    drifted = _drifted(contract)
    drifted["answers"]["explain"] = {"type": "object", "properties": {}}
    assert differences(drifted) == [
        "explain: a document of the core's contract without a Python model"
    ]


def test_a_hint_that_differs_between_the_languages_is_found(contract: dict[str, Any]) -> None:
    assert contract["error_hints"]["connect_auth"].endswith("pg_hba.conf")
    drifted = _drifted(contract)
    drifted["error_hints"]["connect_auth"] = "check the password"
    [found] = differences(drifted)
    assert found.startswith('error connect_auth: hint "check the user and password')
    assert found.endswith("'check the password' in the core")


def test_every_error_kind_of_the_core_has_its_own_exception(contract: dict[str, Any]) -> None:
    kinds = contract["error_kinds"]
    assert "config" in kinds and "internal" in kinds
    for kind in kinds:
        if kind != "internal":
            assert error_class_for_kind(kind) is not InternalError, kind


def test_what_python_sends_is_exactly_the_configuration_the_core_declares(
    contract: dict[str, Any],
) -> None:
    config = RunConfig(
        target=TargetConfig(url="postgresql://x@h/db"), workload=WorkloadConfig(name="tpcb")
    )
    sent = json.loads(config.to_core_json())
    declared = contract["config"]["properties"]
    assert set(sent) <= set(declared)
    for name, value in sent.items():
        default = declared[name].get("default")
        if name not in contract["config"]["required"] and default is not None:
            assert value == default, name
