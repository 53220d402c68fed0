"""Micro-benchmarks as steps of real studies: on local sizes (each measured on its own CPUs,
fio beside its data, the network over loopback to a server thread on its CPUs), on a remote
target's host through `host.command` (here this machine's own dbscale, the path a
`ssh db1 dbscale` takes), resumed without repeating, and drawn in the report in Chromium."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dbscale.errors import EXIT_CANCELLED, EXIT_TARGET, EXIT_USAGE
from dbscale.targets.local.server import free_port
from tests.conftest import REPO
from tests.integration.browser import open_page
from tests.integration.conftest import dbscale, local_sizes_dir

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]

MICRO = """
micro:
  cpu: {{repetitions: 2, seconds: 0.05}}
  disk: {{size_mib: 8, runtime: 1s, jobs: [rd-latency, wr-iops-tpcc-fsync]}}
  net: {{seconds: 0.3, streams: 1, port: {port}}}
"""
LOCAL_PLAN = """
name: micro-sizes
targets:
  - {{name: pg, url: local, vcpus: [1, 2], local: {{dir: {dir}, settings: {{fsync: off}}}}}}
workload: {{name: tpcb-select-only, params: {{scale: 1}}}}
load: {{clients: 1, duration: 1s}}
repeat: 1
warmup_runs: 0
"""
MICRO_IDS = ["micro-cpu", "micro-disk-iops", "micro-disk-latency", "micro-net-latency",
             "micro-net-throughput"]  # fmt: skip


def _micro_lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "micro.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def sized_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    server_dir = local_sizes_dir("micro")
    base = tmp_path_factory.mktemp("micro")
    plan = base / "plan.yaml"
    plan.write_text(LOCAL_PLAN.format(dir=server_dir) + MICRO.format(port=free_port()))
    out = base / "results"
    try:
        done = dbscale("run", str(plan), "--out", str(out))
        done.assert_ok()
        leftovers = sorted(p.name for p in (server_dir / "micro-disk").iterdir())
        resumed = dbscale("run", str(plan), "--resume", str(out))
    finally:
        shutil.rmtree(server_dir, ignore_errors=True)
    assert leftovers == [".dbscale-micro-disk"]  # fio's file is gone, the marker stays
    resumed.assert_ok()
    assert "micro cpu on the host" not in resumed.err + resumed.out  # nothing ran again
    return out


def test_each_size_is_measured_on_its_own_cpus(sized_study: Path) -> None:
    records = _micro_lines(sized_study)
    assert [(r["place"], r["kind"]) for r in records] == [
        (f"pg-{n}vcpu", kind) for n in (1, 2) for kind in ("cpu", "disk", "net")
    ]
    available = sorted(os.sched_getaffinity(0))
    for record in records:
        vcpus = 1 if record["place"] == "pg-1vcpu" else 2
        assert record["where"]["how"] == "local" and record["where"]["vcpus"] == vcpus
        assert record["where"]["cpus"] == (str(available[0]) if vcpus == 1
                                           else f"{available[0]}-{available[1]}")  # fmt: skip
        assert record["target_info"]["vcpus"] == vcpus
        if record["kind"] == "cpu":
            assert record["result"]["threads"] == vcpus  # the kernels ran on the size's CPUs
            per_vcpu = record["figures"]["cpu per vCPU"]["values"]
            assert len(per_vcpu) == 2 and min(per_vcpu) > 0
        if record["kind"] == "disk":
            assert record["where"]["disk_dir"].startswith("/var/tmp/dbscale-test-micro-")
            assert record["where"]["disk_dir"].endswith("/micro-disk")  # beside the data
            assert record["figures"]["rd-latency read IOPS"]["values"][0] > 0
            assert "wr-iops-tpcc-fsync fsync p99" in record["figures"]
        if record["kind"] == "net":
            assert record["result"]["streams"]["streams"] == 1
            assert record["figures"]["net request/response"]["values"][0] > 0
    summary = json.loads((sized_study / "summary.json").read_text())
    rows = {(r["place"], r["figure"]): r for r in summary["micro"]}
    one = rows[("pg-1vcpu", "cpu per vCPU")]
    assert one["samples"] == 2 and one["vcpus"] == 1 and one["median"] > 0
    assert rows[("pg-2vcpu", "net streams")]["unit"] == "Gbit/s"


def test_the_report_draws_the_machine(sized_study: Path, browser: Any) -> None:
    page_file = sized_study / "report.html"
    html = page_file.read_text()
    assert 'id="machine"' in html and "cpu per vCPU" in html
    seen = open_page(browser, page_file, sized_study / "report.png")
    assert seen["console"] == [] and seen["outside"] == []
    charts = {c["id"].removeprefix("chart-"): c for c in seen["charts"]}
    for chart_id in MICRO_IDS:
        chart = charts[chart_id]
        assert chart["rendered"] == "true" and chart["paths"] > 0, chart
    assert "Machine: micro-benchmarks" in seen["text"]


def test_a_remote_host_is_measured_through_its_command(tpcb_url: str, tmp_path: Path) -> None:
    port = free_port()
    host = (f"{{command: '{sys.executable} -m dbscale', address: 127.0.0.1, "
            f"disk_dir: {tmp_path / 'disk'}}}")  # fmt: skip
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"targets: [{{name: db, url: '{tpcb_url}', host: {host}}}]\n"
        "workload: tpcb-select-only\nload: {duration: 1s}\nrepeat: 1\nwarmup_runs: 0\n"
        + MICRO.format(port=port).replace("{{", "{").replace("}}", "}")
    )
    out = tmp_path / "results"
    done = dbscale("run", str(plan), "--out", str(out))
    done.assert_ok()
    records = _micro_lines(out)
    assert [(r["place"], r["kind"], r["where"]["how"]) for r in records] == [
        ("db", "cpu", "remote"), ("db", "disk", "remote"), ("db", "net", "remote"),
    ]  # fmt: skip
    assert records[0]["result"]["threads"] == len(os.sched_getaffinity(0))
    assert records[2]["result"]["target"] == f"127.0.0.1:{port}"
    assert "on the target's host: dbscale micro cpu --json" in done.err
    assert sys.executable not in (out / "micro.jsonl").read_text()  # the command is not kept


def test_a_target_on_this_machine_needs_no_host_command(tpcb_url: str, tmp_path: Path) -> None:
    """A 127.0.0.1 server dbscale did not start: measured here, on its server's CPUs, fio beside
    its data directory; a remote host without host.command is still refused."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"targets: [{{name: db, url: '{tpcb_url}'}}]\n"
        "workload: tpcb-select-only\nload: {duration: 1s}\nrepeat: 1\nwarmup_runs: 0\n"
        + MICRO.format(port=free_port()).replace("{{", "{").replace("}}", "}")
    )
    out = tmp_path / "results"
    dbscale("run", str(plan), "--out", str(out)).assert_ok()
    records = _micro_lines(out)
    assert [(r["kind"], r["where"]["how"]) for r in records] == [
        ("cpu", "local"), ("disk", "local"), ("net", "local"),
    ]  # fmt: skip
    disk_dir = Path(records[1]["where"]["disk_dir"])
    assert disk_dir.name == "micro-disk"
    assert any((d / "PG_VERSION").is_file() for d in disk_dir.parent.iterdir())  # beside its data
    assert records[0]["where"]["vcpus"] >= 1
    remote = tmp_path / "remote.yaml"
    remote.write_text(plan.read_text().replace(tpcb_url, "postgresql://u@db1.invalid/x"))
    refused = dbscale("run", str(remote), "--dry-run")
    assert refused.code == EXIT_USAGE and "host.command" in refused.err, refused.text


def test_a_host_command_that_fails_stops_the_study(tpcb_url: str, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"targets: [{{name: db, url: '{tpcb_url}', host: {{command: 'false'}}}}]\n"
        "workload: tpcb-select-only\nload: {duration: 1s}\nmicro: {cpu: {}}\n"
    )
    done = dbscale("run", str(plan), "--out", str(tmp_path / "results"))
    assert done.code == EXIT_TARGET, done.text
    done.assert_user_error()
    assert "error: micro cpu on the target's host failed (exit 1)" in done.err


def test_an_interrupted_micro_step_resumes_with_its_own_settings(
    tpcb_url: str, tmp_path: Path
) -> None:
    def plan(repetitions: int) -> str:
        path = tmp_path / f"plan-{repetitions}.yaml"
        path.write_text(
            f"targets: [{{name: db, url: '{tpcb_url}', host: {{command: "
            f"'{sys.executable} -m dbscale'}}}}]\nworkload: tpcb-select-only\n"
            "load: {duration: 1s}\nrepeat: 1\nwarmup_runs: 0\n"
            f"micro: {{cpu: {{repetitions: {repetitions}, seconds: 0.2}}}}\n"
        )
        return str(path)

    out = tmp_path / "results"
    process = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "run", plan(100), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    time.sleep(4)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == EXIT_CANCELLED, err
    assert "cancelled by Ctrl-C during micro cpu on the host of db" in err
    assert "this one is not recorded" in err and f"--resume {out}" in err
    assert not (out / "micro.jsonl").exists() or not (out / "micro.jsonl").read_text()
    dbscale("run", plan(2), "--resume", str(out)).assert_ok()
    assert [r["settings"]["repetitions"] for r in _micro_lines(out)] == [2]
    refused = dbscale("run", plan(3), "--resume", str(out))
    assert refused.code == EXIT_USAGE
    refused.assert_user_error()
    assert "ran with other micro.cpu settings" in refused.err
