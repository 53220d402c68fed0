"""`dbscale rank` and `dbscale history` on real small studies made here: a local PostgreSQL in
sizes of 1 and 2 vCPUs with example prices, and the shared test server as a third target;
ranking by target and by vCPUs, refusing unlike runs, the pages drawn in Chromium; history of a
script workload whose statement got slower, caught in the newest ingest."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dbscale.errors import EXIT_OK, EXIT_REGRESSION, EXIT_USAGE
from tests.integration.browser import ARTIFACTS, open_page
from tests.integration.conftest import LOCAL_SIZES_TARGET, dbscale, local_sizes_dir

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]

PRICES = """
    prices: {{date: 2024-05-01, source: example rates for the test, vcpu_per_hour: 0.0413,
              gib_per_hour: 0.0070, storage_per_gb_month: 0.17}}"""
SIZES_PLAN = (
    """
name: rank-sizes
targets:"""
    + LOCAL_SIZES_TARGET
    + PRICES
    + """
workload: {{name: tpcb, params: {{scale: 1}}}}
load: {{clients: {clients}, duration: 1s}}
repeat: 4
warmup_runs: 1
"""
)
SHARED_PLAN = (
    """
name: rank-shared
targets:
  - name: shared
    url: {url}
    instance_type: shared-test
    vcpus: 2
    memory_gib: 4"""
    + PRICES
    + """
workload: {{name: tpcb, params: {{scale: 1}}}}
load: {{clients: 2, duration: 1s}}
repeat: 4
warmup_runs: 1
"""
)


@pytest.fixture(scope="module")
def studies(tpcb_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Local sizes at 2 clients, the shared server at 2 clients, local sizes at 4 clients."""
    root = tmp_path_factory.mktemp("rank")
    server_dir = local_sizes_dir("rank")
    out: dict[str, Path] = {}
    try:
        for name, text in (
            ("sizes", SIZES_PLAN.format(dir=server_dir, clients=2)),
            ("shared", SHARED_PLAN.format(url=tpcb_url)),
            ("sizes4", SIZES_PLAN.format(dir=server_dir, clients=4)),
        ):
            plan = root / f"{name}.yaml"
            plan.write_text(text)
            out[name] = root / name
            dbscale("run", str(plan), "--out", str(out[name])).assert_ok()
    finally:
        shutil.rmtree(server_dir, ignore_errors=True)
    return out


def test_rank_by_target_across_studies(studies: dict[str, Path], tmp_path: Path) -> None:
    done = dbscale("rank", str(studies["sizes"]), str(studies["shared"]), "--metric",
                   "tpm_per_vcpu", "--by", "target", "--json", "--csv",
                   str(tmp_path / "r.csv"))  # fmt: skip
    done.assert_ok()
    table = json.loads(done.out)
    configurations = {c["configuration"]: c for c in table["configurations"]}
    assert set(configurations) == {"pg-1vcpu", "pg-2vcpu", "shared"}
    assert sorted(c["rank"] for c in configurations.values()) == [1, 2, 3] or any(
        c["dead_heat"] for c in configurations.values()
    )
    # A tie group is a dead heat exactly when it has several members, and its members' rank
    # intervals share a rank; configurations of different groups are ordered by rank.
    groups: dict[int, list[dict[str, Any]]] = {}
    for c in table["configurations"]:
        groups.setdefault(c["tie_group"], []).append(c)
    for members in groups.values():
        assert all(c["dead_heat"] == (len(members) > 1) for c in members)
        assert max(c["rank_low"] for c in members) <= min(c["rank_high"] for c in members)
    ordered = [groups[g] for g in sorted(groups)]
    for better, worse in itertools.pairwise(ordered):
        assert max(c["rank"] for c in better) < min(c["rank"] for c in worse)
    for c in configurations.values():
        assert c["n"] == 4 and len(c["values"]) == 4
        assert c["rank_low"] <= c["rank"] <= c["rank_high"]
        assert c["ci_method"] == "range" and c["ci_low"] == min(c["values"])
        assert c["min"] <= c["median"] <= c["max"]
        assert c["price_per_unit"] > 0  # cost per TPM from the example prices
    ranked = sorted(configurations.values(), key=lambda c: -c["median"])
    assert [c["rank"] for c in ranked] == sorted(c["rank"] for c in ranked)
    assert table["price_metric"] == "cost_per_tpm"
    assert {row["reason"] for row in table["left_out"]} == {"warm-up"}
    assert len(table["left_out"]) == 3  # one warm-up per target
    assert table["common"]["clients"] == "2" and table["common"]["scale"] == "1"
    header = (tmp_path / "r.csv").read_text().splitlines()[0]
    assert header.startswith("rank,rank_low,rank_high,tie_group,dead_heat,configuration,n,")


def test_rank_refuses_unlike_runs_until_told(studies: dict[str, Path]) -> None:
    done = dbscale("rank", str(studies["sizes"]), str(studies["sizes4"]), "--metric", "tps",
                   "--by", "vcpus")  # fmt: skip
    assert done.code == EXIT_USAGE
    assert done.err.splitlines() == [
        "error: these runs are unlike things: clients differs (2 in sizes; 4 in sizes4)",
        "hint: rank like runs only (--where FACT=VALUE), or --allow clients when that differs by "
        "design (e.g. warehouses scaled with the machine)",
    ]
    allowed = dbscale("rank", str(studies["sizes"]), str(studies["sizes4"]), "--metric", "tps",
                      "--by", "vcpus", "--allow", "clients", "--json")  # fmt: skip
    allowed.assert_ok()
    by_vcpus = {c["configuration"]: c["n"] for c in json.loads(allowed.out)["configurations"]}
    assert by_vcpus == {"1": 8, "2": 8}
    chosen = dbscale("rank", str(studies["sizes"]), str(studies["sizes4"]), "--metric", "tps",
                     "--by", "vcpus,clients", "--json")  # fmt: skip
    chosen.assert_ok()
    names = {c["configuration"] for c in json.loads(chosen.out)["configurations"]}
    assert names == {"1 / 2", "2 / 2", "1 / 4", "2 / 4"}


def test_the_rank_page_in_a_browser(studies: dict[str, Path], browser: Any, tmp_path: Path) -> None:
    page_file = tmp_path / "rank.html"
    done = dbscale("rank", str(studies["sizes"]), str(studies["shared"]),
                   str(studies["sizes4"]), "--metric", "tps", "--by", "target,clients",
                   "--html", str(page_file))  # fmt: skip
    done.assert_ok()
    assert "TPS (transactions/s; higher is better) by target, clients" in done.out
    seen = open_page(browser, page_file, ARTIFACTS / "rank.png")
    assert seen["console"] == [] and seen["outside"] == []
    assert [c["rendered"] for c in seen["charts"]] == ["true", "true"]
    assert all(c["paths"] > 0 for c in seen["charts"])
    assert "Runs left out" in seen["text"] and "pg-2vcpu / 4" in seen["text"]


SLEEP_PLAN = """
name: sleepy
targets: [{{name: pg, url: {url}}}]
workload:
  name: script
  scripts: [{{file: step.sql}}]
load: {{clients: 2, duration: 1s}}
repeat: 5
warmup_runs: 0
"""


def test_history_catches_a_slower_statement(live: Any, tmp_path: Path, browser: Any) -> None:
    """Three ingests: 2 ms, 2 ms, then 6 ms a statement. With three points the last is compared
    with the one before (A/B): TPS falls by two thirds, the median latency triples, and CI fails
    with exit 9. (The median, not p99: the p99 of a 1 s run on a busy CI machine is a few
    scheduler stalls. A busy host adds the same milliseconds to both sides, which shrinks the
    changes; the bounds allow 2 ms of it: the 4 ms step once read +52% beside CPU hogs.)"""
    store = tmp_path / "store"
    for version, seconds in (("1.0", 0.002), ("1.1", 0.002), ("2.0", 0.006)):
        plan_dir = tmp_path / f"plan-{version}"
        plan_dir.mkdir()
        (plan_dir / "step.sql").write_text(f"SELECT pg_sleep({seconds});\n")
        plan = plan_dir / "plan.yaml"
        plan.write_text(SLEEP_PLAN.format(url=live.url))
        dbscale("run", str(plan), "--out", str(tmp_path / version)).assert_ok()
        added = dbscale("history", "add", str(tmp_path / version), "--label",
                        f"version={version}", "--store", str(store))  # fmt: skip
        added.assert_ok()
        assert "5 runs" in added.out
    again = dbscale("history", "add", str(tmp_path / "2.0"), "--store", str(store))
    assert again.code == EXIT_USAGE and "5 runs already in the store" in again.err
    detect = dbscale("history", "detect", "--store", str(store), "--metric", "tps,p50_ms",
                     "--fail-on", "regression", "--json")  # fmt: skip
    assert detect.code == EXIT_REGRESSION, detect.text
    found = {entry["metric"]: entry for entry in json.loads(detect.out)}
    for metric, low, high in (("tps", -75, -40), ("p50_ms", 80, 260)):
        entry = found[metric]
        assert [p["labels"]["version"] for p in entry["points"]] == ["1.0", "1.1", "2.0"]
        assert all(p["n"] == 5 for p in entry["points"])
        (change,) = entry["changes"]
        assert change["kind"] == "regression" and change["in_newest"]
        assert low < change["change_pct"] < high, change
        assert "the last against the one before: worse" in entry["note"]
    assert "error: regression in the newest ingest" in detect.err
    page_file = tmp_path / "history.html"
    shown = dbscale("history", "show", "--store", str(store), "--metric", "tps", "--html",
                    str(page_file))  # fmt: skip
    assert shown.code == EXIT_OK
    assert "regression" in shown.out and "version=2.0" in shown.out
    seen = open_page(browser, page_file, ARTIFACTS / "history.png")
    assert seen["console"] == [] and seen["outside"] == []
    assert [c["rendered"] for c in seen["charts"]] == ["true"]
    # The store's frame and load_results' metrics frame share their columns.
    pandas = pytest.importorskip("pandas")
    from dbscale import load_results
    from dbscale.history.store import HistoryStore

    metrics = load_results(tmp_path / "2.0").metrics
    frame = HistoryStore(store).frame()
    assert set(metrics.columns) <= set(frame.columns)
    runs = frame[(frame["kind"] == "run") & (frame["metric"] == "tps")]
    mine = metrics[metrics["metric"] == "tps"]
    assert set(mine["run_id"]) <= set(runs["run_id"])
    joined = mine.merge(runs, on="run_id", suffixes=("", "_store"))
    assert (joined["value"] == joined["value_store"]).all()
    assert isinstance(frame, pandas.DataFrame)
