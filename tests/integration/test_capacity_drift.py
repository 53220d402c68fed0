"""A target that gets slower during a capacity search ends it without an answer (issue 42).

The script sleeps as long as a one-row table says: 5 ms at first (two connections hold about
400 a second), 60 ms once the search has run its first levels (about 33 a second). A search
that believed each fail would walk down to the slow target's capacity and answer it; this one
measures a level that passed again, sees it fail at a fraction of the throughput it had, and
says the target got slower, naming that level's two runs, with exit 10."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from dbscale.errors import EXIT_NO_CAPACITY
from tests.conftest import PgTestServer
from tests.integration.conftest import dbscale

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]

SLOW_AFTER_LEVELS = 2


def _slow_down_after(live: PgTestServer, db: str, book: Path, stop: threading.Event) -> None:
    """Once capacity.json lists SLOW_AFTER_LEVELS level runs, the delay goes to 60 ms."""
    while not stop.wait(0.2):
        try:
            [found] = json.loads(book.read_text())["searches"]
        except (OSError, ValueError):
            continue
        if len([x for x in found["levels"] if x["state"] == "pass"]) >= SLOW_AFTER_LEVELS:
            live.psql("UPDATE drift_knob SET delay = 0.06", db)
            return


def test_a_target_that_gets_slower_ends_the_search_without_an_answer(
    live: PgTestServer, tmp_path: Path
) -> None:
    url = live.fresh_database("dbscale_drift")
    live.psql("CREATE TABLE drift_knob (delay float8); INSERT INTO drift_knob VALUES (0.005)",
              "dbscale_drift")  # fmt: skip
    script = tmp_path / "knob.sql"
    script.write_text("SELECT pg_sleep(delay) FROM drift_knob;\n")
    out = tmp_path / "drift"
    stop = threading.Event()
    flip = threading.Thread(target=_slow_down_after,
                            args=(live, "dbscale_drift", out / "capacity.json", stop))  # fmt: skip
    flip.start()
    started = time.monotonic()
    try:
        done = dbscale("capacity", f"script:{script}", "--target", url, "-c", "2", "-j", "1",
                       "--slo", "p90<=100ms", "--settle", "1s", "--measure", "3s..6s",
                       "--confirm", "1", "--out", str(out))  # fmt: skip
    finally:
        stop.set()
        flip.join()
    assert done.code == EXIT_NO_CAPACITY, done.text
    done.assert_user_error()
    assert "the target got slower during the search" in done.err, done.text
    [found] = json.loads((out / "capacity.json").read_text())["searches"]
    [objective] = found["objectives"]
    assert objective["capacity"] is None and not objective["never_passed"], objective
    high, low = objective["drift_high"], objective["drift_low"]
    assert high is not None and low is not None, objective
    runs = [x for x in found["levels"] if x["level"] == high]
    assert any(x["state"] == "pass" for x in runs) and runs[-1]["phase"] == "recheck", runs
    passed = next(x for x in runs if x["state"] == "pass")
    assert runs[-1]["state"] != "pass" and runs[-1]["achieved"] < passed["achieved"] / 1.08
    # It stopped at the drift instead of walking down to the slow target's ~33/s.
    assert min(x["level"] for x in found["levels"]) > 40, found["levels"]
    assert f"level {high:,.4g}" in done.out and "failed when measured again" in done.out
    assert time.monotonic() - started < 120
