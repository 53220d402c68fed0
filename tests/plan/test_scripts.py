"""The script workload from the command line and from plan files: the mix's words, --define,
files read once relative to the plan, checked by the core before anything runs; and pgbench's
output shapes for mixes and per-command latencies."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from dbscale.errors import ConfigError, PlanError, ScriptError
from dbscale.plan.build import RunOptions
from dbscale.plan.scripts import is_mix, mix_entries, parse_defines
from dbscale.results.record import RunRecord
from dbscale.run.console import pgbench_lines
from dbscale.targets import OpenTarget
from tests.plan.helpers import plan_file, study


def test_mix_words_and_defines() -> None:
    assert not is_mix(["tpcb"]) and not is_mix(["plans/a@b.yaml"])
    assert is_mix(["script:a.sql"]) and is_mix(["tpcb", "tpcb-select-only"])
    assert is_mix(["tpcb@1"])  # pgbench -b tpcb-like@1
    assert mix_entries(["script:a.sql@3", "script:b.sql", "tpcb@1"]) == [
        {"file": "a.sql", "weight": 3}, {"file": "b.sql", "weight": 1},
        {"builtin": "tpcb", "weight": 1},
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="weight after @ must be a whole number"):
        mix_entries(["script:a.sql@x"])
    assert parse_defines(["x=+3", "y=", "z=a=b"]) == {"x": "+3", "y": "", "z": "a=b"}
    with pytest.raises(ConfigError, match="not name=value"):
        parse_defines(["x"])


def test_a_command_line_mix_reads_its_files_once(tmp_path: Path, core: ModuleType) -> None:
    script = tmp_path / "a.sql"
    script.write_text("\\set x 1\nSELECT :x;\n")
    built = study(RunOptions(workload=[f"script:{script}@2", "tpcb@1"], defines=["y=2"],
                              transactions=5))  # fmt: skip
    [point] = built.points
    assert point.workload == "script"
    assert [(s.name, s.weight, s.text) for s in point.scripts] == [
        (str(script), 2, "\\set x 1\nSELECT :x;\n"), ("tpcb", 1, None)]  # fmt: skip
    assert point.defines == {"y": "2"}
    assert point.load.transactions == 5
    config = point.run_config(OpenTarget(url="postgresql://u@h/db"))
    assert config.transactions == 5 and config.workload.scripts[0].weight == 2
    # Editing a script changes the point's fingerprint: a resumed study will not mix them.
    before = point.fingerprint
    script.write_text("SELECT 2;\n")
    [again] = study(RunOptions(workload=[f"script:{script}@2", "tpcb@1"], defines=["y=2"],
                                transactions=5)).points  # fmt: skip
    assert again.fingerprint != before


def test_a_plans_scripts_are_relative_to_the_plan(tmp_path: Path, core: ModuleType) -> None:
    (tmp_path / "sql").mkdir()
    (tmp_path / "sql" / "mine.sql").write_text("SELECT 1;\n")
    path = plan_file(tmp_path, "workload:\n  name: script\n  scripts:\n"
                     "    - file: sql/mine.sql\n      weight: 4\n    - builtin: tpcb-select-only\n"
                     "  defines: {delta: 5, flag: true}\n")  # fmt: skip
    [point] = study(RunOptions(workload=str(path))).points
    assert [(s.name, s.weight) for s in point.scripts] == [("sql/mine.sql", 4),
                                                          ("tpcb-select-only", 1)]  # fmt: skip
    assert point.defines == {"delta": "5", "flag": "true"}


def test_bad_scripts_and_misplaced_settings_are_refused(tmp_path: Path, core: ModuleType) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text("\\sleep 3 years\n")
    with pytest.raises(ScriptError, match=r"bad.sql:1: unrecognized time unit.* \(column 1\)"):
        study(RunOptions(workload=[f"script:{bad}"]))
    with pytest.raises(PlanError, match="does not exist"):
        study(RunOptions(workload=[f"script:{tmp_path / 'none.sql'}"]))
    with pytest.raises(PlanError, match="--define sets variables of script workloads"):
        study(RunOptions(workload="tpcb", defines=["x=1"]))
    path = plan_file(tmp_path, "workload:\n  name: tpcb\n  scripts:\n    - builtin: tpcb\n")
    with pytest.raises(PlanError, match="scripts and defines belong to the script workload"):
        study(RunOptions(workload=str(path)))
    both = "workload:\n  name: script\n  scripts:\n    - {file: a, builtin: b}\n"
    path = plan_file(tmp_path, both, name="both.yaml")
    with pytest.raises(PlanError, match="one of them"):
        study(RunOptions(workload=str(path)))
    with pytest.raises(ConfigError, match="no built-in script"):
        study(RunOptions(workload=["tpcb@1", "nosuch@1"]))


def test_pgbench_shapes_of_a_mix_and_its_commands() -> None:
    record = RunRecord.from_json({
        "workload": "script", "clients": 2, "threads": 1, "protocol": "simple",
        "duration_s": 2.0, "transactions": 30, "tps": 15.0,
        "config": {"target": {"url": "postgresql://h/db"}, "transactions": 15,
                   "workload": {"name": "script", "scripts": [
            {"name": "a.sql", "weight": 3}, {"name": "b.sql", "weight": 1}]}},
        "transaction_types": {"a.sql": {"transactions": 22, "latency_ms": {"mean": 1.5}},
                              "b.sql": {"transactions": 8, "failed": 1}},
        "commands": [
            {"script": "a.sql", "line": 1, "command": "\\set x 1", "count": 22, "mean_ms": 0.001},
            {"script": "b.sql", "line": 2, "command": "SELECT 1", "count": 8, "failures": 1,
             "mean_ms": 0.25},
        ],
    })  # fmt: skip
    lines = pgbench_lines(record)
    assert "transaction type: multiple scripts" in lines
    assert "number of transactions per client: 15" in lines
    assert "number of transactions actually processed: 30/30" in lines
    assert " - weight: 3 (targets 75.0% of total)" in lines
    assert " - 22 transactions (73.3% of total, tps = 11.000000)" in lines
    assert " - number of failed transactions: 1 (11.111%)" in lines
    at = lines.index("statement latencies in milliseconds and failures:")
    assert lines[at + 1 :] == [" a.sql:", "         0.001           0  \\set x 1",
                               " b.sql:", "         0.250           1  SELECT 1"]  # fmt: skip
