"""The report of a real small study, opened in headless Chromium (tests/integration/browser.py):
the page loads from a file with no network request and no console error or warning, and every
chart draws as SVG. The screenshot is kept in test-artifacts/report.png (gitignored).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.browser import ARTIFACTS, open_page
from tests.integration.conftest import dbscale, read_runs

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]


@pytest.fixture(scope="module")
def study(tpcb_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two client levels, two runs each, after a warm-up: about 15 s."""
    out = tmp_path_factory.mktemp("report") / "study"
    done = dbscale(
        "run", "tpcb-select-only", "--target", tpcb_url, "--clients", "1,2", "-T", "2s",
        "--repeat", "2", "--warmup", "1s", "-o", str(out),
    )  # fmt: skip
    done.assert_ok()
    assert f"report: {out / 'report.html'}" in done.err
    return out


def _spec_ids(html: str) -> list[str]:
    found = re.search(r'id="dbscale-specs">(.*?)</script>', html, re.S)
    assert found is not None
    return list(json.loads(found.group(1)))


def test_the_report_of_a_real_study_draws_every_chart(study: Path, browser: Any) -> None:
    page_file = study / "report.html"
    html = page_file.read_text(encoding="utf-8")
    ids = _spec_ids(html)
    records = read_runs(study / "runs.jsonl")
    observed = all("observe" in r for r in records)
    # Wait events show only when the sampler caught an active session (short runs may not).
    waited = any(((r.get("observe") or {}).get("waits") or {}).get("events") for r in records)
    resources = ["resource-use"] * observed + ["wait-events"] * waited
    assert ids == [
        "throughput-vs-clients", "latency-vs-clients", "variation", *resources, "timeline",
        "latency-spectrum",
    ]  # fmt: skip
    assert len(html.encode()) < 5 * 1024 * 1024
    seen = open_page(browser, page_file, ARTIFACTS / "report.png")
    assert seen["console"] == []
    assert seen["outside"] == []
    assert [c["id"] for c in seen["charts"]] == [f"chart-{i}" for i in ids]
    for chart in seen["charts"]:
        assert chart["rendered"] == "true", chart
        assert chart["marks"] == 1, chart
        assert chart["paths"] > 0, chart
    assert "Points" in seen["text"]
    assert "#w1 warm-up" in seen["text"]
    assert "tpcb-select-only" in seen["text"]


def test_images_and_the_compare_page(study: Path, browser: Any, tmp_path: Path) -> None:
    dbscale("report", str(study), "--images").assert_ok()
    images = sorted(p.name for p in (study / "report-images").iterdir())
    assert "throughput-vs-clients.png" in images
    assert "throughput-vs-clients.svg" in images
    page_file = tmp_path / "compare.html"
    dbscale("compare", str(study), str(study), "--html", str(page_file)).assert_ok()
    seen = open_page(browser, page_file, ARTIFACTS / "compare.png")
    assert seen["console"] == []
    assert seen["outside"] == []
    assert [c["rendered"] for c in seen["charts"]] == ["true"]
    assert "no significant change" in seen["text"]
