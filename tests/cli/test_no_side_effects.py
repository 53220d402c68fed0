"""Refused before anything happens (issue 40, cases 12 and 13): a report of a study with no
run is an error, not an empty page; `dbscale run --resume DIR` whose plan does not match the
runs there is refused before a server starts or a report is drawn."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from dbscale.cli.app import run_cli
from dbscale.errors import EXIT_FAILURE, EXIT_USAGE
from tests.synthetic import make_record, write_results


@pytest.mark.parametrize("content", ["", '{"workload": "tpcb", "tps": 1'])  # empty; a torn line
def test_a_report_of_no_run_is_an_error(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "runs.jsonl").write_text(content)
    assert run_cli(["report", str(tmp_path)]) == EXIT_FAILURE
    err = capsys.readouterr().err
    assert "holds no run" in err and "hint:" in err
    assert not (tmp_path / "report.html").exists()


def test_resume_with_another_plan_is_refused_before_any_side_effect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(1)
    study = write_results(tmp_path / "s", [make_record({"tls": "disable"}, 100.0, rng=rng)])
    (study / "plan.json").write_text(json.dumps({"source": "plan.yaml"}))
    code = run_cli(["run", "--resume", str(study)])  # no workload: the demo's plan
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "holds runs of point tls=disable" in err, err
    assert "embedded" not in err and "starting" not in err
    assert not (study / "report.html").exists(), "nothing drawn for a refused resume"
