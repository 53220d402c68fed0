"""`dbscale run` draws report.html however it ends: Ctrl-C included, with what was recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO
from tests.integration.conftest import read_runs


def test_ctrl_c_still_writes_the_report(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "interrupted"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "run", "tpcb-select-only", "--target", tpcb_url,
         "-c", "2", "-T", "60s", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    [record] = read_runs(out / "runs.jsonl")
    assert record["cancelled"] is True
    assert f"report: {out / 'report.html'}" in stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "was cancelled (Ctrl-C): shown, not counted" in html
    assert "nothing to summarize" in html
    assert 'id="chart-timeline"' in html
