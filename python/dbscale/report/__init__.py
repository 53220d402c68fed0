"""The report: one self-contained HTML page of a results directory's charts and numbers
(`dbscale report DIR`, and at the end of every `dbscale run`), optionally every chart as PNG/SVG.

    write_report(DIR)          -> DIR/report.html (and DIR/report-images/ with images=True)
    render_compare_html(cmp)   -> the page of a `dbscale compare` result

See docs/report.md.
"""

from __future__ import annotations

from dbscale.report.compare_page import render_compare_html
from dbscale.report.writer import ReportFiles, default_cache_dir, write_report

__all__ = ["ReportFiles", "default_cache_dir", "render_compare_html", "write_report"]
