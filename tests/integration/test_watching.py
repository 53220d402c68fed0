"""Watching a study from Prometheus (issue 43): a real Prometheus scrapes `--metrics-addr` every
second during a TPC-B run; its counters equal runs.jsonl's totals exactly once the run is kept,
PromQL's increase() and histogram_quantile() agree with the record within one scrape and one
bucket; and an address that cannot be served is refused before anything runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from dbscale.errors import EXIT_USAGE
from dbscale.live.figures import LATENCY_BOUNDS_S
from dbscale.targets.local.server import free_port
from tests.conftest import REPO, skip_or_fail
from tests.integration.browser import ARTIFACTS
from tests.integration.clusters import cluster_dir, cluster_plan
from tests.integration.conftest import dbscale, read_runs
from tests.integration.prometheus import prometheus

PLAN = """
name: {name}
targets: [{{name: pg, url: "{url}"}}]
workload: tpcb
load: {{clients: 2, duration: {seconds}s}}
repeat: 1
warmup_runs: 0
live: {{{endpoint}: "127.0.0.1:{port}", linger: {linger}s}}
"""


def _scrape(port: int) -> dict[str, float]:
    """Every sample of the endpoint as `name{labels}` -> value (OpenMetrics, as Prometheus asks)."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={
        "Accept": "application/openmetrics-text; version=1.0.0"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.headers["Content-Type"].startswith("application/openmetrics-text")
        text = answer.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items())
                              if k not in ("study", "point", "target", "phase"))  # fmt: skip
            samples[f"{sample.name}{{{labels}}}"] = sample.value
    return samples


def _bucket_index(seconds: float) -> int:
    return next((i for i, bound in enumerate(LATENCY_BOUNDS_S) if seconds <= bound),
                len(LATENCY_BOUNDS_S))  # fmt: skip


def test_prometheus_scrapes_a_run_and_its_figures_equal_the_record(
    tpcb_url: str, tmp_path: Path
) -> None:
    port = free_port()
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(name="watched", url=tpcb_url, seconds=6, endpoint="metrics",
                                port=port, linger=4))  # fmt: skip
    out = tmp_path / "results"
    with prometheus(tmp_path, [f"127.0.0.1:{port}"]) as prom:
        # Prometheus starts scraping a few seconds after it is ready (its discovery's first
        # update): from then on every second of the run is scraped.
        assert prom.wait_for("up"), "prometheus did not start scraping"
        process = _start_run(plan, out)
        # Mid-run: the counter grows while the run goes on.
        seen: list[float] = []
        deadline = time.monotonic() + 60
        while len(seen) < 3 and time.monotonic() < deadline and process.poll() is None:
            try:
                samples = _scrape(port)
            except OSError:
                time.sleep(0.2)
                continue
            live = [v for k, v in samples.items() if k.startswith("dbscale_transactions_total")]
            if live and live[0] > 0 and (not seen or live[0] > seen[-1]):
                seen.append(live[0])
                typed = [v for k, v in samples.items() if k.startswith("dbscale_type_trans")]
                assert typed == live, (typed, live)  # per type too, second by second
            time.sleep(1.0)
        assert len(seen) == 3, "the counter did not grow during the run"
        # During the linger: the run is kept, its figures are the record's, exactly.
        while process.poll() is None:
            samples = _scrape(port)
            if samples.get("dbscale_study_running{}") == 0.0:
                break
            time.sleep(0.3)
        final = _scrape(port)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
        assert f"metrics: http://127.0.0.1:{port}/metrics" in stderr
        [record] = read_runs(out / "runs.jsonl")
        run = record["run_key"]
        assert final[f"dbscale_transactions_total{{run={run}}}"] == record["transactions"]
        assert final[f"dbscale_failures_total{{run={run}}}"] == record["failed"]
        count = final[f"dbscale_transaction_latency_seconds_count{{run={run}}}"]
        assert count == record["latency_ms"]["count"] == record["transactions"]
        for name, kind in record["transaction_types"].items():
            assert final[f"dbscale_type_transactions_total{{run={run},type={name}}}"] == \
                kind["transactions"]  # fmt: skip
        assert "detail" not in json.dumps(record["intervals"])  # the record as unwatched
        verdict = record["observe"]["limited_by"]["verdict"]
        assert final[f"dbscale_limited_by{{run={run},verdict={verdict}}}"] == 1.0
        # PromQL over what Prometheus scraped each second.
        selector = f'{{run="{run}"}}'
        total = prom.wait_for(f"max_over_time(dbscale_transactions_total{selector}[5m])")
        assert float(total[0]["value"][1]) == record["transactions"]
        second = max(i["transactions"] for i in record["intervals"])
        increase = prom.value(f"increase(dbscale_transactions_total{selector}[5m])")
        assert abs(increase - record["transactions"]) <= 1.5 * second, (increase, second)
        p99 = prom.value(
            "histogram_quantile(0.99, sum by (le) (max_over_time("
            f"dbscale_transaction_latency_seconds_bucket{selector}[5m])))"
        )
        hdr_p99_s = record["latency_ms"]["p99"] / 1000.0
        assert abs(_bucket_index(p99) - _bucket_index(hdr_p99_s)) <= 1, (p99, hdr_p99_s)
        # Each expression of the Grafana dashboard returns data over the run.
        start = datetime.fromisoformat(record["started_at"]).timestamp() - 2.0
        end = datetime.fromisoformat(record["ended_at"]).timestamp() + 3.0
        for expression in _dashboard_expressions():
            assert prom.query_range(expression, start, end), expression


def _dashboard_expressions() -> list[str]:
    """contrib/grafana's queries with every variable set to all values."""
    board = json.loads((REPO / "contrib" / "grafana" / "dbscale-study.json").read_text())
    found = [t["expr"] for p in board["panels"] for t in p["targets"]]
    found += [a["expr"] for a in board["annotations"]["list"]]
    return [e.replace("$study", ".*").replace("$phase", ".*") for e in found]


def test_an_address_that_cannot_be_served_is_refused_before_anything_runs(
    tpcb_url: str, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        for address, words in ((f"127.0.0.1:{port}", "the port is in use"),
                               ("192.0.2.1:9464", "cannot listen there"),
                               ("localhost:http", "is not a port number"),
                               ("::1:9464", "needs brackets")):  # fmt: skip
            out = tmp_path / address.replace(":", "_")
            done = dbscale("run", "tpcb", "--target", tpcb_url, "-T", "1s", "--metrics-addr",
                           address, "--out", str(out))  # fmt: skip
            assert done.code == EXIT_USAGE, done.text
            done.assert_user_error()
            assert words in done.err, done.err
            assert not out.exists()


def test_a_finished_study_backfills_into_prometheus_blocks(tpcb_url: str, tmp_path: Path) -> None:
    """`dbscale export openmetrics` of a run made without the endpoint: promtool accepts it, and
    the blocks hold the run's total as the counter's last sample."""
    promtool = shutil.which("promtool")
    if promtool is None:
        skip_or_fail("no promtool: `make system-deps` installs Debian's prometheus package")
    out = tmp_path / "results"
    dbscale("run", "tpcb", "--target", tpcb_url, "-c", "2", "-T", "3s", "--repeat", "2",
            "--warmup", "0", "--out", str(out)).assert_ok()  # fmt: skip
    exported = dbscale("export", "openmetrics", str(out))
    exported.assert_ok()
    assert "2 runs" in exported.out
    text = (out / "metrics.om").read_text()
    assert text.endswith("# EOF\n") and "dbscale_transactions_total{" in text
    blocks = tmp_path / "blocks"
    made = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics",
                           str(out / "metrics.om"), str(blocks)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    (blocks / "wal").mkdir(exist_ok=True)  # what promtool 2.42's dump opens beside the blocks
    dumped = subprocess.run([promtool, "tsdb", "dump", "--match=dbscale_transactions_total",
                             str(blocks)], capture_output=True, text=True, check=False)  # fmt: skip
    assert dumped.returncode == 0, dumped.stderr
    last: dict[str, float] = {}
    for line in dumped.stdout.splitlines():  # `{labels} value timestamp`, in time order
        labels, value, _ = line.rsplit(" ", 2)
        run = labels.split('run="', 1)[1].split('"', 1)[0]
        last[run] = float(value)
    records = read_runs(out / "runs.jsonl")
    assert last == {r["run_key"]: float(r["transactions"]) for r in records}
    missing = dbscale("export", "openmetrics", str(tmp_path / "nothing"))
    missing.assert_user_error()


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return bytes(answer.read())


def _start_run(plan: Path, out: Path) -> subprocess.Popen[str]:
    """`dbscale run PLAN --out OUT` in the background, its output captured."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    return subprocess.Popen([sys.executable, "-m", "dbscale", "run", str(plan), "--out", str(out)],
                            cwd=out.parent, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip


def _wait_for_page(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            _get(f"http://127.0.0.1:{port}/live.json")
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("the live page did not answer")


def test_the_live_page_gains_points_while_the_run_goes_on(
    tpcb_url: str, tmp_path: Path, browser: Any
) -> None:
    port = free_port()
    plan = tmp_path / "plan.yaml"
    # A password in the target's URL (the test server trusts loopback, so it is not checked):
    # neither the page, its JSON nor /metrics may show it.
    secret = "s3cret-word-4711"
    url = tpcb_url.replace("postgres@", f"postgres:{secret}@", 1)
    assert secret in url
    plan.write_text(PLAN.format(name="watched-page", url=url, seconds=8, endpoint="web",
                                port=port, linger=3))  # fmt: skip
    process = _start_run(plan, tmp_path / "out")
    try:
        _wait_for_page(port, process)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        console: list[str] = []
        outside: list[str] = []
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
        origin = f"http://127.0.0.1:{port}/"
        page.on("request", lambda r: None if r.url.startswith(origin) else outside.append(r.url))
        page.goto(origin)
        points = "Number(document.getElementById('timeline').dataset.points || 0)"
        page.wait_for_function(f"{points} >= 2", timeout=30_000)
        first = page.evaluate(points)
        page.wait_for_function(f"{points} > {first}", timeout=10_000)
        assert page.evaluate("document.querySelectorAll('#timeline svg.marks').length") >= 1
        assert "running" in page.inner_text("#state")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "live-page.png"), full_page=True)
        page.wait_for_function("document.getElementById('state').textContent === 'ended'",
                               timeout=60_000)  # fmt: skip
        shown = page.inner_text("body")
        page.close()
        served = [_get(f"http://127.0.0.1:{port}{path}").decode()
                  for path in ("/", "/live.json", "/metrics")]  # fmt: skip
    finally:
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert console == [] and outside == [], (console, outside)
    [record] = read_runs(tmp_path / "out" / "runs.jsonl")
    assert f"{record['transactions']:,}" in shown
    assert f"page: http://127.0.0.1:{port}/" in stderr and f"{port}/metrics" in stderr
    for text in (shown, *served, stderr, (tmp_path / "out" / "runs.jsonl").read_text()):
        assert secret not in text


def test_the_live_page_shows_a_failover_on_a_local_cluster(tmp_path: Path, browser: Any) -> None:
    """A primary killed and a standby promoted: after the run the page's per-node chart has the
    fault steps marked and the killed node's line at zero, and the run's failovers counted."""
    port = free_port()
    name = "watched-failover"
    plan = tmp_path / "plan.yaml"
    plan.write_text(cluster_plan(name, "postgresql-sync", (
        "workload: {name: tpcb, params: {scale: 1}}\n"
        "load: {clients: 3, duration: 6s, transaction_timeout: 3s}\n"
        "faults:\n  - {at: 2s, kill: primary}\n  - {at: 3s, promote: standby}\n"
        "repeat: 1\nwarmup_runs: 0\n"
        f'live: {{web: "127.0.0.1:{port}", linger: 30s}}\n')))  # fmt: skip
    process = _start_run(plan, tmp_path / "out")
    try:
        _wait_for_page(port, process)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            state = json.loads(_get(f"http://127.0.0.1:{port}/live.json"))
            if not state["running"]:
                break
            time.sleep(0.5)
        assert not state["running"], "the study did not end"
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function("document.getElementById('nodes').dataset.points > 0",
                               timeout=30_000)  # fmt: skip
        rules = page.evaluate("document.querySelectorAll('#nodes svg.marks line').length")
        samples = _scrape(port)  # the page's server answers /metrics too
        report = _get(f"http://127.0.0.1:{port}/report.html")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "live-page-failover.png"), full_page=True)
        page.close()
        process.send_signal(signal.SIGINT)  # the linger ends at Ctrl-C
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
        shutil.rmtree(cluster_dir(name), ignore_errors=True)
    assert process.returncode == 0, stderr
    [run] = state["runs"]
    assert run["failovers"] >= 1, run
    assert [e["text"].split(" at ")[0] for e in run["events"] if e["text"].startswith("fault:")
            ][:2] == ["fault: kill n1", "fault: promote n2"], run["events"]  # fmt: skip
    assert rules >= 2  # the two fault steps, drawn where they happened
    key = run["run"]
    assert samples[f"dbscale_node_up{{node=n1,run={key}}}"] == 0.0
    assert samples[f"dbscale_node_up{{node=n2,run={key}}}"] == 1.0
    assert samples[f"dbscale_fault_steps_total{{run={key},step=kill n1}}"] == 1.0
    assert samples[f"dbscale_failovers_total{{run={key}}}"] == run["failovers"]
    assert report.startswith(b"<!DOCTYPE html>")
    series = state["nodes"]["data"]["values"]
    killed = [row["tps"] for row in series if row["node"] == series[0]["node"]]
    assert killed[0] > 0 and killed[-1] == 0, killed  # n1 served, then its line went to zero
