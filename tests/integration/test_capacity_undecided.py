"""A capacity level that cannot gather the transactions a verdict needs is not a fail (issue
42): `SELECT pg_sleep(0.2)` over 2 connections completes at most 10 a second, so a p99 <= 1 s
objective measured for 10 s sees about 50 transactions, none over the limit, where the exact
bound wants 299. The search stops there, undecided, exits 10 and names the measure that would
decide, instead of walking down to ever shorter levels and answering "no level passed"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dbscale import load_results
from dbscale.errors import EXIT_NO_CAPACITY
from tests.integration.conftest import dbscale, read_runs

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]


def test_a_level_short_of_transactions_stops_the_search_with_the_measure_to_use(
    tpcb_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "slow.sql"
    script.write_text("SELECT pg_sleep(0.2);\n")
    out = tmp_path / "slow"
    done = dbscale("capacity", f"script:{script}", "--target", tpcb_url, "-c", "2", "-j", "1",
                   "--slo", "p99<=1s", "--settle", "1s", "--measure", "4s..8s",
                   "--out", str(out))  # fmt: skip
    assert done.code == EXIT_NO_CAPACITY, done.text
    done.assert_user_error()
    hint = re.search(r"--measure 4s\.\.(\d+)s", done.err)
    assert hint is not None, done.err
    # About 299 transactions at the ~5-10 a second the level achieved, a fifth more.
    assert 30 <= int(hint.group(1)) <= 120, done.err
    assert "undecided: level " in done.out and "no level passed" not in done.out
    [found] = json.loads((out / "capacity.json").read_text())["searches"]
    [objective] = found["objectives"]
    assert objective["capacity"] is None and not objective["never_passed"]
    assert objective["short_level"] is not None and objective["measure_needed_s"] > 8
    short = [x for x in found["levels"] if x["state"] == "short"]
    assert short and all("0 over the limit" in x["reasons"][0] for x in short)
    # One level, not a walk down: the probe (and any run again on a busy host) and that level.
    levels = {x["level"] for x in found["levels"]}
    assert levels == {objective["short_level"]}, found["levels"]
    assert all(r["run_key"].startswith(("probe", "rate=")) for r in read_runs(out / "runs.jsonl"))
    # The levels as a frame, each objective's share over the limit with its interval.
    frame = load_results(out).capacity
    assert set(frame["state"]) == {"short"} and (frame["share_over"] == 0).all()
    assert (frame["share_high"] <= 1.0).all() and frame["objective"].iloc[0] == "p99<=1s"
