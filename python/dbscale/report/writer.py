"""Writes a results directory's report: reads the study, picks its charts, renders the page
(replaced atomically, so a reader never sees half a page) and, on request, the images.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from dbscale import __version__
from dbscale.files import write_atomic
from dbscale.report import bundle
from dbscale.report.chart import Chart
from dbscale.report.charts import plan_charts
from dbscale.report.images import IMAGES_DIR, write_images
from dbscale.report.page import render_report_html
from dbscale.report.view import load_view

REPORT_FILE = "report.html"
SIZE_BUDGET_BYTES = 5 * 1024 * 1024  # a typical study's page stays under this


@dataclass(frozen=True)
class ReportFiles:
    html: Path
    size_bytes: int
    charts: list[Chart]
    images: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def default_cache_dir(env: Mapping[str, str]) -> Path:
    """Where the bundled charting library is cached: $XDG_CACHE_HOME/dbscale or ~/.cache/dbscale."""
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dbscale"


def this_host() -> str:
    return f"{platform.node()} ({os.cpu_count()} CPUs, {platform.system()} {platform.release()})"


def write_report(
    path: Path,
    *,
    images: bool = False,
    cache_dir: Path | None = None,
    now: datetime | None = None,
) -> ReportFiles:
    """`path/report.html` from `path/runs.jsonl`; with `images`, `path/report-images/*.png|svg`."""
    study = load_view(path)
    charts = plan_charts(study)
    generated = {
        "dbscale": __version__,
        "at": (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "host": this_host(),
        **bundle.library_versions(),
    }
    html = render_report_html(
        study,
        charts,
        bundle_js=bundle.javascript_bundle(cache_dir),
        schema=bundle.schema_url(),
        generated=generated,
    )
    target = path / REPORT_FILE
    data = html.encode("utf-8")
    write_atomic(target, data)
    notes: list[str] = []
    if len(data) > SIZE_BUDGET_BYTES:
        notes.append(f"{target} is {len(data) / 1e6:.1f} MB, over the 5 MB budget")
    written = write_images(charts, path / IMAGES_DIR) if images else []
    return ReportFiles(target, len(data), charts, written, notes)
