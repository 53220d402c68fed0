"""A quick study that steps a local PostgreSQL through two CPU sizes, as seed 000 stepped Cloud
SQL through vCPU counts: each size restarts the server confined to its CPUs, the summary has TPM
per vCPU and $/TPM from the target's example prices, and a target whose setup hook fails is
skipped while the study goes on."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from dbscale.errors import EXIT_TARGET
from tests.integration.conftest import LOCAL_SIZES_TARGET, dbscale, local_sizes_dir

PLAN = (
    """
name: local-sizes
targets:"""
    + LOCAL_SIZES_TARGET
    + """
    prices:
      date: 2024-05-01
      source: example rates for the test, not a real price list
      vcpu_per_hour: 0.0413
      vcpu_per_hour_reserved: 0.0260
      gib_per_hour: 0.0070
      gib_per_hour_reserved: 0.0044
      storage_per_gb_month: 0.17
    hooks:
      setup: echo resize to {{vcpus}} vCPUs, {{memory_mb}} MB
  - name: broken
    url: postgresql://nobody@127.0.0.1:1/none
    hooks: {{setup: "echo quota exceeded; exit 2"}}
workload: {{name: tpcb, params: {{scale: 1}}}}
load: {{clients: 2, duration: 1s}}
matrix: {{tls: [disable, require]}}
repeat: 5
warmup_runs: 0
"""
)


@pytest.mark.slow
def test_a_study_steps_through_local_cpu_sizes(core: ModuleType, tmp_path: Path) -> None:
    server_dir = local_sizes_dir("sizes")
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(dir=server_dir))
    out = tmp_path / "results"
    try:
        done = dbscale("run", str(plan), "--out", str(out))
    finally:
        shutil.rmtree(server_dir, ignore_errors=True)
    assert done.code == EXIT_TARGET, done.text
    assert "skipping the points of broken: target broken: hook setup exited with 2" in done.err
    assert "error: target broken: hook setup exited with 2: echo quota exceeded" in done.err
    assert "hint: see " in done.err and "broken-setup.log" in done.err
    assert "quota exceeded" in (out / "hooks" / "broken-setup.log").read_text()

    cpus = {}
    for name in ("pg-1vcpu", "pg-2vcpu"):
        record = json.loads((out / "targets" / f"{name}.json").read_text())
        assert record["local"]["all_confined"] is True
        cpus[name] = record["local"]["cpus"]
        assert record["server"]["settings"]["fsync"] == "off"
    available = sorted(os.sched_getaffinity(0))
    assert cpus == {"pg-1vcpu": str(available[0]), "pg-2vcpu": f"{available[0]}-{available[1]}"}
    setup_log = (out / "hooks" / "pg-2vcpu-setup.log").read_text()
    assert "resize to 2 vCPUs, 1024 MB" in setup_log

    summary = json.loads((out / "summary.json").read_text())
    assert summary["targets_failed"] == {"broken": "target broken: hook setup exited with 2: "
                                         "echo quota exceeded; exit 2"}  # fmt: skip
    points = {p["target"]: p for p in summary["points"] if p["point"]["tls"] == "disable"}
    assert set(points) == {"pg-1vcpu", "pg-2vcpu"}
    for name, vcpus in (("pg-1vcpu", 1), ("pg-2vcpu", 2)):
        tpm, cost = points[name]["tpm"], points[name]["cost"]
        assert tpm["median"] == pytest.approx(points[name]["tps"]["median"] * 60, rel=1e-5)
        assert tpm["per_vcpu"] == pytest.approx(tpm["median"] / vcpus, rel=1e-5)
        monthly = (vcpus * 0.0413 + vcpus * 0.5 * 0.0070) * 730 + 10 * 0.17
        assert cost["total_on_demand_per_month"] == pytest.approx(monthly, abs=1e-3)
        assert cost["per_tpm_on_demand"] == pytest.approx(monthly / tpm["median"], rel=1e-4)
        assert cost["per_tpm_reserved"] < cost["per_tpm_on_demand"]
    with (out / "summary.csv").open() as rows:
        header = next(csv.reader(rows))
    for column in ("tpm_per_vcpu", "cost_per_tpm_on_demand", "cost_per_tpm_reserved_ci_high",
                   "cost_storage_share_on_demand_pct", "cost_price_date"):  # fmt: skip
        assert column in header
    assert "price-performance" in done.out
    assert "prices as of 2024-05-01: example rates for the test" in done.out
    # The report: seed 000's figures by vCPU, a headline answering what TLS costs at each size,
    # and a header that names the sizes.
    page = (out / "report.html").read_text()
    assert (
        'id="by-vcpus"' in page and 'id="resources-by-vcpus"' in page and 'id="cost-of-tls"' in page
    )
    headline = re.search(r'<ul class="headline" id="headline">(.*?)</ul>', page, re.S)
    assert headline is not None, "no headline"
    lines = re.findall(r"<li>(.*?)</li>", headline.group(1))
    assert lines[0].startswith("TPS peaks at "), lines
    at = r" at target=pg-[12]vcpu"
    tls = re.compile(
        rf"^(TLS \(tls=require\) (costs|adds) \d+% \[-?\d+, -?\d+\] of TPS{at}|no significant "
        rf"difference between no TLS and TLS \(tls=require\){at}|TLS \(tls=require\){at}: .*"
        r"inconclusive: too few runs)"
    )  # a finding either way, or inconclusive in compare's words
    assert len([line for line in lines if tls.match(line)]) == 2, lines
    assert "None" not in page.split("<nav>")[0]
