"""The page: one self-contained file (no fetched scripts, styles or data), small enough, with the
specs, tables and summary.csv inside; images without a browser; the compare page."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from dbscale.errors import ResultsError
from dbscale.report import render_compare_html, write_report
from dbscale.report.command import report_after_run
from dbscale.report.writer import SIZE_BUDGET_BYTES
from dbscale.results.compare import ComparisonOptions, compare_dirs
from tests.report.conftest import WriteDir
from tests.report.fixtures import record, sweep

SPECS = re.compile(r'<script type="application/json" id="dbscale-specs">(.*?)</script>', re.S)
CSV_LINK = re.compile(r'download="summary.csv"\s+href="data:text/csv;charset=utf-8;base64,([^"]+)"')


def _observed(target: str, _protocol: str, clients: int, _rep: int) -> dict[str, Any]:
    columns = ["t_s", "client_cpu_cores", "server_cpu_user_cores", "host_idle_pct"]
    rows = [[t, 0.1 * clients, 0.3 * clients, 70.0] for t in range(1, 61)]
    return {
        "target_info": {"vcpus": 8 if "db2" in target else 4},
        "observe": {
            "version": 1,
            "host": {"cpu_model": "Test CPU", "logical_cpus": 16},
            "resources": {"interval_s": 1.0, "columns": columns, "rows": rows},
            "waits": {"samples": 100, "events": {"CPU": 80, "Lock:tuple": clients}},
            "limited_by": {"verdict": "server-cpu", "client_bound": False},
        },
    }


def _specs(html: str) -> dict[str, Any]:
    found = SPECS.search(html)
    assert found is not None
    specs: dict[str, Any] = json.loads(found.group(1))
    return specs


def test_the_page_is_one_self_contained_file(results_dir: WriteDir, bundle_cache: Path) -> None:
    directory = results_dir(sweep((1, 2, 4), repeats=2))
    files = write_report(directory, cache_dir=bundle_cache)
    html = files.html.read_text(encoding="utf-8")
    assert files.html == directory / "report.html"
    assert not re.search(r"<script[^>]+src=", html)
    assert not re.search(r"<link[^>]+href=", html)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "vegaEmbed" in html
    specs = _specs(html)
    assert list(specs) == [c.id for c in files.charts]
    for chart_id, spec in specs.items():
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v")
        assert f'id="chart-{chart_id}"' in html


def test_summary_csv_is_embedded(results_dir: WriteDir, bundle_cache: Path) -> None:
    directory = results_dir(sweep((1, 2)))
    written = "point_key,runs\nclients=1,1\nclients=2,1\n"
    (directory / "summary.csv").write_text(written, encoding="utf-8")
    html = write_report(directory, cache_dir=bundle_cache).html.read_text(encoding="utf-8")
    link = CSV_LINK.search(html)
    assert link is not None
    assert base64.b64decode(link.group(1)).decode() == written


def test_without_a_summary_csv_the_point_table_is_embedded(
    results_dir: WriteDir, bundle_cache: Path
) -> None:
    directory = results_dir(sweep((1, 2)))
    html = write_report(directory, cache_dir=bundle_cache).html.read_text(encoding="utf-8")
    link = CSV_LINK.search(html)
    assert link is not None
    lines = base64.b64decode(link.group(1)).decode().splitlines()
    assert lines[0].startswith("clients,threads,runs,median TPS")
    assert len(lines) == 3


def test_names_from_results_are_escaped(results_dir: WriteDir, bundle_cache: Path) -> None:
    evil = "</script><script>alert(1)</script>"
    directory = results_dir([record(extra={"target_name": evil})])
    html = write_report(directory, cache_dir=bundle_cache).html.read_text(encoding="utf-8")
    assert evil not in html
    assert "&lt;/script&gt;" in html


def test_a_typical_study_stays_under_the_size_budget(
    results_dir: WriteDir, bundle_cache: Path
) -> None:
    """Two targets x 5 client levels x 5 runs of 60 s, observed: the seeds' kind of study."""
    records = sweep(
        (1, 2, 4, 8, 16), repeats=5, seconds=60, samples=2000,
        targets=("postgresql://u@db1/x", "postgresql://u@db2/x"), extra_for=_observed,
    )  # fmt: skip
    files = write_report(results_dir(records), cache_dir=bundle_cache)
    assert files.size_bytes < SIZE_BUDGET_BYTES
    assert files.warnings == []
    assert {"resource-use", "wait-events", "throughput-per-vcpu"} <= {c.id for c in files.charts}


def test_a_long_study_is_thinned_to_stay_under_the_budget(
    results_dir: WriteDir, bundle_cache: Path
) -> None:
    """10 points x 6 runs x 10 minutes: 36,000 per-second rows, thinned."""
    records = sweep(tuple(range(1, 11)), repeats=6, seconds=600, samples=200)
    files = write_report(results_dir(records), cache_dir=bundle_cache)
    assert files.size_bytes < SIZE_BUDGET_BYTES
    timeline = next(c for c in files.charts if c.id == "timeline")
    assert "per 3 s" in timeline.spec["title"]


def test_images_are_written_without_a_browser(results_dir: WriteDir, bundle_cache: Path) -> None:
    directory = results_dir(sweep((1, 2), repeats=2))
    files = write_report(directory, images=True, cache_dir=bundle_cache)
    assert len(files.images) == 2 * len(files.charts)
    for chart in files.charts:
        png = directory / "report-images" / f"{chart.id}.png"
        svg = directory / "report-images" / f"{chart.id}.svg"
        assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        assert "<svg" in svg.read_text(encoding="utf-8")[:200]


def test_a_directory_without_runs_is_a_results_error(tmp_path: Path) -> None:
    with pytest.raises(ResultsError) as caught:
        write_report(tmp_path)
    assert "runs.jsonl" in caught.value.message


def test_the_end_of_run_report_never_fails_the_run(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    report_after_run(tmp_path, env={}, err=console)  # nothing ran: nothing to draw
    assert console.export_text() == ""
    (tmp_path / "runs.jsonl").write_text(json.dumps(record()) + "\n")
    (tmp_path / "report.html").mkdir()  # cannot be replaced by a file
    report_after_run(tmp_path, env={"XDG_CACHE_HOME": str(tmp_path / "cache")}, err=console)
    text = console.export_text()
    assert "warning: no report drawn" in text
    assert f"dbscale report {tmp_path}" in text


def test_the_compare_page_shows_each_verdict(tmp_path: Path, bundle_cache: Path) -> None:
    for name, factor in (("a", 1.0), ("b", 1.2)):
        directory = tmp_path / name
        directory.mkdir()
        records = sweep((1, 2), repeats=5)
        for r in records:
            r.update(tps=r["tps"] * factor, point_key=f"clients={r['clients']}")
        (directory / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    comparison = compare_dirs(tmp_path / "a", tmp_path / "b", ComparisonOptions())
    html = render_compare_html(comparison, cache_dir=bundle_cache)
    specs = _specs(html)
    assert list(specs) == ["compare-change"]
    values = specs["compare-change"]["data"]["values"]
    assert {(v["point"], v["metric"], v["verdict"]) for v in values if v["metric"] == "TPS"} == {
        ("clients=1", "TPS", "better"),
        ("clients=2", "TPS", "better"),
    }
    assert "no significant change" in html
    assert not re.search(r"<script[^>]+src=", html)
