"""`dbscale capacity` against a server with a known capacity: a script whose transaction holds
one of 4 connections for 2 ms (`SELECT pg_sleep(0.002)`) completes at most 2,000 a second,
whatever the offered rate; past that, queueing pushes the latency up without bound. The search
must find the knee, and a repeated search must agree within its brackets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import JUnitXml

from dbscale.errors import EXIT_NO_CAPACITY, EXIT_USAGE
from tests.conftest import REPO, PgTestServer
from tests.integration.browser import open_page
from tests.integration.conftest import Outcome, dbscale, read_runs

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]

SLEEP = "SELECT pg_sleep(0.002);\n"
KNOWN_MAX = 4 / 0.002  # transactions/s: 4 connections, 2 ms each
QUICK = ["-c", "4", "-j", "1", "--slo", "p99<=100ms", "--settle", "1s", "--measure", "4s..8s",
         "--resolution", "5%", "--confirm", "1"]  # fmt: skip
# A coarser search (about half the time) where the answer's precision is not what is tested.
COARSE = ["--resolution", "10%", "--measure", "3s..6s"]


def _search(url: str, script: Path, out: Path, *extra: str) -> dict[str, Any]:
    done = dbscale("capacity", f"script:{script}", "--target", url, *QUICK, *extra,
                   "--out", str(out))  # fmt: skip
    [found] = json.loads((out / "capacity.json").read_text())["searches"]
    _answered(done, found)
    assert "capacity p99<=100ms [bracket]: level " in done.out  # a line per level
    assert found["finished"]
    assert isinstance(found, dict)
    return found


def _answered(done: Outcome, found: dict[str, Any]) -> None:
    """The search ended with its answer: exit 0, or on a host busy all along (other work beside
    make test) exit 10 saying the host may have been the limit, never the database's."""
    if done.code != EXIT_NO_CAPACITY:
        done.assert_ok()
        return
    assert all(o["host_limited"] for o in found["objectives"]), done.text
    assert "the host may have been the limit" in done.err, done.err


def _cpu_hogs(seconds: float) -> list[subprocess.Popen[bytes]]:
    """Two busy loops (this machine's two cores) that end by themselves after `seconds`."""
    loop = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(2)]


def test_the_search_finds_a_known_knee_and_repeats(
    tpcb_url: str, tmp_path: Path, browser: Any
) -> None:
    """Two CPU hogs take the host for the search's first 10 s (issue 42): the probe measured
    then is measured again once they are gone, so the search still finds the quiet knee."""
    script = tmp_path / "sleep.sql"
    script.write_text(SLEEP)
    hogs = _cpu_hogs(10)
    try:
        found = _search(tpcb_url, script, tmp_path / "one")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    [objective] = found["objectives"]
    capacity = objective["capacity"]
    saturated = found["saturated"]
    probes = [x for x in read_runs(tmp_path / "one" / "runs.jsonl")
              if x["run_key"].startswith("probe")]  # fmt: skip
    assert len(probes) >= 2 and probes[1]["run_key"] == "probe~again1", [
        (x["run_key"], x["tps"]) for x in probes]  # fmt: skip
    # The probe cannot beat 4 connections x 2 ms; the knee lies just below what it measured.
    assert 0.6 * KNOWN_MAX < saturated <= KNOWN_MAX * 1.01, saturated
    # Up to the search's ceiling (1.25x the probe): on a busy host the closed-loop probe reads
    # below the open model's knee (measured 1,534 against a 1,622 answer beside two CPU hogs);
    # and down to 0.6x: a stall of the CI host during a level's few seconds can fail it (CI
    # measured 1,136 against a 1,677 probe, 0.68x).
    assert capacity is not None and 0.6 * saturated <= capacity <= saturated * 1.25, found
    assert capacity <= KNOWN_MAX * 1.01, found
    assert objective["lowest_fail"] is not None
    assert objective["lowest_fail"] <= capacity * 1.05 * 1.05  # the bracket closed
    # Every level is an ordinary run, keyed by its level; the answer passed its confirmation.
    records = read_runs(tmp_path / "one" / "runs.jsonl")
    assert {r["run_key"] for r in records} >= {x["run_key"] for x in found["levels"]}
    passing = [x for x in found["levels"] if x["level"] == capacity and x["state"] == "pass"]
    assert len(passing) >= 2
    assert all(r["rate_tps"] for r in records if not r["run_key"].startswith("probe"))
    page = (tmp_path / "one" / "report.html").read_text()
    assert 'id="capacity-curve"' in page
    seen = open_page(browser, tmp_path / "one" / "report.html", tmp_path / "one" / "report.png")
    assert seen["console"] == [] and seen["outside"] == []
    [curve] = [c for c in seen["charts"] if c["id"] == "chart-capacity-curve"]
    assert curve["rendered"] == "true" and curve["paths"] > 0, curve
    assert f"capacity {capacity:,.4g} transactions/s" in seen["text"]  # the headline
    # A second search on the same target agrees within the brackets (a coarser one: its bracket
    # only has to hold the first answer, and it takes half the time).
    # With a threshold on its answer and a JUnit file (issue 45): a case per objective and one
    # per threshold; capacity.json validates against its published schema.
    junit = tmp_path / "capacity.xml"
    again = _search(tpcb_url, script, tmp_path / "two", *COARSE, "--junit", str(junit),
                    "--threshold", "capacity >= 100")["objectives"][0]  # fmt: skip
    [suite] = list(JUnitXml.fromfile(str(junit)))
    names = [case.name for case in suite]
    assert names[0].startswith("capacity p99<=100ms @ ")
    if not again["host_limited"]:  # exit 10 on a host busy all along ends before judging
        assert names[1].startswith("capacity >= 100 @ "), names
    schema = json.loads((REPO / "schemas" / "capacity.schema.json").read_text())
    jsonschema.validate(json.loads((tmp_path / "two" / "capacity.json").read_text()), schema)
    low = min(objective["highest_pass"], again["highest_pass"])
    high = max(objective["lowest_fail"], again["lowest_fail"])
    assert low <= again["capacity"] <= high and low <= capacity <= high
    # --resume replays the recorded runs: nothing runs again, the answer is the same.
    before = len(read_runs(tmp_path / "one" / "runs.jsonl"))
    resumed_run = dbscale("capacity", f"script:{script}", "--target", tpcb_url, *QUICK,
                          "--resume", str(tmp_path / "one"))  # fmt: skip
    assert len(read_runs(tmp_path / "one" / "runs.jsonl")) == before
    [resumed] = json.loads((tmp_path / "one" / "capacity.json").read_text())["searches"]
    _answered(resumed_run, resumed)
    assert resumed["objectives"][0]["capacity"] == capacity


@pytest.mark.parametrize(
    ("flags", "needle"),
    [([], "needs a latency objective"), (["--slo", "p99"], "is not a latency objective"),
     (["--slo", "p99<=1ms", "--measure", "5s..1s"], "the longest is shorter"),
     (["--slo", "p99<=1ms", "--knob", "warp"], "is not rate, clients, warehouses or"),
     (["--slo", "p99<=1ms", "-c", "1,2"], "searches one configuration")],
)  # fmt: skip
def test_bad_options_are_one_error(tpcb_url: str, flags: list[str], needle: str) -> None:
    done = dbscale("capacity", "tpcb", "--target", tpcb_url, *flags)
    assert done.code == EXIT_USAGE, done.text
    done.assert_user_error()
    assert needle in done.err


def test_tpcc_warehouses_are_searched_under_tpccs_own_rule(
    live: PgTestServer, tmp_path: Path
) -> None:
    """tpccbench's knob: active warehouses, a terminal each without waits; a level fails when
    TPC-C's pass rule does, and the answer says the tpmC it held. A loose objective and a rule
    every level passes: the search climbs to the loaded warehouses, and says it stopped there."""
    url = live.fresh_database("dbscale_capacity_tpcc")
    dbscale("prepare", "tpcc", "--target", url, "--set", "warehouses=3").assert_ok()
    out = tmp_path / "tpcc"
    done = dbscale("capacity", "tpcc", "--target", url, "--set", "wait=false", "--set",
                   "warehouses=3", "--knob", "warehouses", "--slo", "p95<=10s", "--settle", "1s",
                   "--measure", "2s", "--confirm", "1", "--max-errors", "5%",
                   "--out", str(out))  # fmt: skip
    done.assert_ok()
    [found] = json.loads((out / "capacity.json").read_text())["searches"]
    [objective] = found["objectives"]
    assert objective["capacity"] == 3 and objective["at_ceiling"], found
    assert {x["level"] for x in found["levels"]} <= {1.0, 2.0, 3.0}
    assert all(x["tpmc"] and x["tpmc"] > 0 for x in found["levels"])
    assert "capacity 3 warehouses (at the search's ceiling" in done.out and "tpmC " in done.out
    records = read_runs(out / "runs.jsonl")
    assert {r["tpcc"]["active_warehouses"] for r in records} <= {1, 2, 3}
    assert all(r["clients"] == r["tpcc"]["active_warehouses"] for r in records)


def test_a_level_cut_by_a_signal_is_measured_again_on_resume(tpcb_url: str, tmp_path: Path) -> None:
    """SIGTERM during a level: the command says how to resume with its own name, and the resumed
    search measures that level again instead of judging its cut run (issue 40, cases 6, 13).
    A damaged capacity.json is set aside and rebuilt from the runs (case 12)."""
    script = tmp_path / "sleep.sql"
    script.write_text(SLEEP)
    out = tmp_path / "cut"
    proc = _started_capacity(tpcb_url, script, out)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the probe recorded, a level under way
        if (out / "runs.jsonl").is_file() and len(read_runs(out / "runs.jsonl")) >= 1:
            break
        time.sleep(0.2)
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert f"dbscale capacity ... --resume {out}" in err, err
    cut = [r for r in read_runs(out / "runs.jsonl") if r["cancelled"]]
    assert len(cut) == 1, "the level under way was kept, marked cancelled"
    (out / "capacity.json").write_text("{ damaged")
    done = dbscale("capacity", f"script:{script}", "--target", tpcb_url, *QUICK, *COARSE,
                   "--resume", str(out))  # fmt: skip
    [found] = json.loads((out / "capacity.json").read_text())["searches"]
    _answered(done, found)
    assert "set aside as capacity.json.damaged" in done.text
    again = [r for r in read_runs(out / "runs.jsonl") if r["run_key"] == cut[0]["run_key"]]
    assert [r["cancelled"] for r in again] == [True, False], "measured again, not judged"
    assert found["finished"]
    # The run cut was a level, or on a busy host the probe measured again (not a level).
    if not cut[0]["run_key"].startswith("probe"):
        assert cut[0]["run_key"] in {x["run_key"] for x in found["levels"]}


def _started_capacity(url: str, script: Path, out: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    return subprocess.Popen(
        [sys.executable, "-m", "dbscale", "capacity", f"script:{script}", "--target", url,
         *QUICK, *COARSE, "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
