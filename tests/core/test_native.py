"""Answers from the core are read strictly (a field Python does not declare, at any depth, is a
dbscale bug said at once), while records read from runs.jsonl keep what they do not know."""

from __future__ import annotations

import pytest

from dbscale.core.answers import ProbeAnswer
from dbscale.core.native import strict
from dbscale.core.result import RunResult
from dbscale.errors import InternalError


def test_an_undeclared_field_from_the_core_is_refused_at_any_depth() -> None:
    with pytest.raises(InternalError, match="bogus"):
        strict(RunResult, {"tps": 1.0, "bogus": 2}, "run result")
    nested = {"verdict": {"status": "ok", "message": "", "reason_code": 3}}
    with pytest.raises(InternalError, match="reason_code"):
        strict(RunResult, nested, "run result")


def test_a_missing_answer_field_is_refused() -> None:
    with pytest.raises(InternalError, match="probe answer"):
        strict(ProbeAnswer, {"server_version": "15", "tls": False}, "probe answer")


def test_a_record_keeps_what_this_version_does_not_know() -> None:
    read = RunResult.model_validate({"tps": 1.0, "later_field": [1, 2]})
    assert read.model_extra == {"later_field": [1, 2]}
    assert "later_field" in read.model_dump()
