"""Thresholds as written and as judged: the expression's grammar and its refusals, the verdict by
interval (pass wholly inside, fail wholly outside, inconclusive across the limit; one run judged
on its value), the JUnit file as a real JUnit reader reads it, and the published schemas as
committed against the models they come from."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from junitparser import Failure, JUnitXml, Skipped

from dbscale.errors import ConfigError
from dbscale.verdicts.expression import parse_threshold
from dbscale.verdicts.judge import _verdict
from dbscale.verdicts.junit import FAILED, PASSED, SKIPPED, Case, junit_xml, threshold_cases
from dbscale.verdicts.schemas import SCHEMAS, schema, schema_text
from dbscale.verdicts.thresholds_file import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    ThresholdsFile,
    ThresholdVerdict,
)
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("text", "metric", "op", "limit", "factor"),
    [
        ("p99_ms < 20", "p99_ms", "<", 20.0, None),
        ("p99_ms<20", "p99_ms", "<", 20.0, None),
        ("errors_pct <= 0.1", "errors_pct", "<=", 0.1, None),
        ("tpmc_per_vcpu >= 12000", "tpmc_per_vcpu", ">=", 12000.0, None),
        ("tps >= 0.95 * baseline", "tps", ">=", None, 0.95),
        ("tps>=baseline*0.9", "tps", ">=", None, 0.9),
        ("tps > baseline", "tps", ">", None, 1.0),
        ("capacity >= 500", "capacity", ">=", 500.0, None),
    ],
)
def test_a_threshold_reads_as_written(
    text: str, metric: str, op: str, limit: float | None, factor: float | None
) -> None:
    found = parse_threshold(text)
    assert (found.metric.name, found.op, found.limit, found.factor) == (metric, op, limit, factor)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("p99 < 20", "'p99' is not a run or capacity metric"),
        ("p99_ms = 20", "is not METRIC OP BOUND"),
        ("p99_ms < fast", "neither a number nor F * baseline"),
        ("tps >= 0 * baseline", "factor must be positive"),
        ("", "is not METRIC OP BOUND"),
    ],
)
def test_a_bad_threshold_is_refused_with_the_grammar(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_threshold(text)
    assert words in caught.value.message
    assert "METRIC OP BOUND" in caught.value.hint


@pytest.mark.parametrize(
    ("text", "values", "verdict"),
    [
        ("p99_ms < 20", [10.0, 11.0, 12.0, 11.5, 10.5, 11.2], PASS),
        ("p99_ms < 20", [25.0, 26.0, 27.0, 25.5, 26.5, 25.2], FAIL),
        ("p99_ms < 20", [15.0, 25.0, 18.0, 22.0, 19.0, 21.0], INCONCLUSIVE),
        ("tps >= 1000", [1100.0, 1150.0, 1120.0], PASS),
        ("tps >= 1000", [900.0, 950.0, 920.0], FAIL),
        ("tps >= 1000", [800.0, 1300.0, 990.0], INCONCLUSIVE),
        ("tps >= 1000", [999.0], FAIL),  # one run: judged on its value
        ("tps >= 1000", [1001.0], PASS),
    ],
)
def test_a_point_is_judged_by_its_interval(text: str, values: list[float], verdict: str) -> None:
    found, words, _ = _verdict(parse_threshold(text), parse_threshold(text).limit or 0, values)
    assert found == verdict, words
    if len(values) == 1:
        assert "one run, no interval" in words


def _verdicts(strict: bool) -> ThresholdsFile:
    common = {"metric": "p99_ms", "unit": "ms", "point_key": "clients=4", "point": "clients=4",
              "limit": 20.0, "runs": 5}  # fmt: skip
    return ThresholdsFile(strict=strict, verdicts=[
        ThresholdVerdict(threshold="p99_ms < 20", verdict=PASS, why="11 [10, 12]", **common),
        ThresholdVerdict(threshold="p99_ms < 20", verdict=FAIL, why="26 [25, 27]", **common),
        ThresholdVerdict(threshold="p99_ms < 20", verdict=INCONCLUSIVE, why="20 [15, 25]",
                         **common),
    ])  # fmt: skip


@pytest.mark.parametrize("strict", [False, True])
def test_the_junit_file_reads_back_in_a_junit_reader(tmp_path: Path, strict: bool) -> None:
    found = _verdicts(strict)
    path = tmp_path / "junit.xml"
    path.write_text(junit_xml("thresholds", threshold_cases(found, "study")))
    suites = JUnitXml.fromfile(str(path))
    [suite] = list(suites)
    cases = list(suite)
    assert len(cases) == 3 and suite.tests == 3
    outcomes = [type(r).__name__ for case in cases for r in case.result]
    assert outcomes == (["Failure", "Failure"] if strict else ["Failure", "Skipped"])
    failure = next(r for r in cases[1].result if isinstance(r, Failure))
    assert "26 [25, 27]" in (failure.message or "")
    assert suite.failures == (2 if strict else 1)
    assert found.passed is False
    if not strict:
        assert any(isinstance(r, Skipped) for r in cases[2].result)


def test_names_with_markup_stay_text() -> None:
    text = junit_xml("s", [Case('p99_ms < 20 @ "a&b"', "c", FAILED, "<b>"),
                           Case("x", "c", PASSED), Case("y", "c", SKIPPED, "why")])  # fmt: skip
    assert "&lt;b&gt;" in text and "&amp;b" in text


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_the_committed_schemas_are_the_models(name: str) -> None:
    """`dbscale schemas --out schemas` writes them; a model changed without them fails here."""
    committed = REPO / "schemas" / f"{name}.schema.json"
    assert committed.read_text() == schema_text(name), (
        f"schemas/{name}.schema.json is stale: run `dbscale schemas --out schemas`"
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(committed.read_text()))
    assert schema(name)["x-schema-version"] >= 1


def test_a_history_baseline_is_found_by_series_and_by_point(tmp_path: Path) -> None:
    """`history:STORE`: the series' newest point, also by its point key (what a run in progress
    knows of itself, for --abort-on-fail)."""
    from dbscale.verdicts.baseline import load_baseline
    from tests.history.planted import planted_store

    store = planted_store(tmp_path / "h", points=4, step_at=3, step=-0.5)
    found = load_baseline(f"history:{store.path}", ["tps"])
    newest = found.by_series[("tps", "planted0001")]
    assert newest == pytest.approx(500.0, rel=0.05)  # the newest point, after the step
    assert found.by_point == {("tps", "default"): newest}
    with pytest.raises(ConfigError):
        load_baseline(f"history:{tmp_path / 'none'}", ["tps"])
