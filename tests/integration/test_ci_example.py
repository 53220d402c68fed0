"""The worked CI example (contrib/ci/github-actions.yml) as a CI would run it: every step whose id
starts with `bench-` runs here, as written, through bash, against the test server (the service
the workflow starts), so the example cannot rot. A second pass adds a second ingest; a plan whose
threshold cannot hold then fails the run step with exit 11."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbscale.errors import EXIT_OK, EXIT_THRESHOLD
from tests.conftest import REPO

pytestmark = [pytest.mark.server, pytest.mark.native]

WORKFLOW = REPO / "contrib" / "ci" / "github-actions.yml"


def _steps() -> list[dict[str, Any]]:
    found = yaml.safe_load(WORKFLOW.read_text())
    steps = found["jobs"]["bench"]["steps"]
    return [s for s in steps if str(s.get("id", "")).startswith("bench-")]


def _shell(tmp_path: Path, url: str) -> dict[str, str]:
    """The job's environment here: `dbscale` on PATH (this checkout), the job's env block with
    the test server's URL in place of the service's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "dbscale"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dbscale "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    job_env = yaml.safe_load(WORKFLOW.read_text())["jobs"]["bench"]["env"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "GITHUB_"))}
    env.update({k: str(v) for k, v in job_env.items()})
    env.update(DBSCALE_URL=url, PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
               PYTHONPATH=str(REPO / "python"), COLUMNS="200")  # fmt: skip
    return env


def _run(step: dict[str, Any], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


def test_the_workflow_steps_run_as_written(live: Any, tmp_path: Path) -> None:
    steps = _steps()
    assert [s["id"] for s in steps] == ["bench-prepare", "bench-run", "bench-history-add",
                                        "bench-detect"]  # fmt: skip
    work = tmp_path / "checkout"
    shutil.copytree(REPO / "contrib" / "ci", work / "contrib" / "ci")
    env = _shell(tmp_path, live.fresh_database("dbscale_ci_example"))
    for attempt in range(2):  # two pushes: two ingests in the history
        shutil.rmtree(work / "results", ignore_errors=True)
        for step in steps:
            done = _run(step, env, work)
            assert done.returncode == EXIT_OK, (attempt, step["id"], done.stdout, done.stderr)
    assert (work / "junit-thresholds.xml").is_file() and (work / "junit-history.xml").is_file()
    assert (work / "dbscale-history" / "ingests").is_dir()
    plan = work / "contrib" / "ci" / "plan.yml"
    plan.write_text(plan.read_text().replace("tps >= 50", "tps >= 1000000000"))
    shutil.rmtree(work / "results")
    done = _run(steps[1], env, work)
    assert done.returncode == EXIT_THRESHOLD, done.stdout + done.stderr
    assert 'failures="1"' in (work / "junit-thresholds.xml").read_text()
