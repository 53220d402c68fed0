"""Every chart as PNG and SVG, rendered by vl-convert (no browser): `dbscale report DIR --images`
writes them next to report.html for slides and papers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dbscale.errors import ResultsError
from dbscale.report.bundle import load_vl_convert, vegalite_version
from dbscale.report.chart import Chart

IMAGES_DIR = "report-images"
PNG_SCALE = 2.0  # twice the CSS size: sharp on slides and high-density screens


def write_images(charts: Sequence[Chart], out_dir: Path) -> list[Path]:
    """`<id>.svg` and `<id>.png` per chart in `out_dir`; returns the files written."""
    vlc = load_vl_convert()
    version = vegalite_version()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultsError(
            f"cannot create {out_dir}: {exc}", hint="check its permissions"
        ) from None
    written: list[Path] = []
    for chart in charts:
        svg = str(vlc.vegalite_to_svg(chart.spec, vl_version=version))
        png = bytes(vlc.vegalite_to_png(chart.spec, vl_version=version, scale=PNG_SCALE))
        for path, write in ((out_dir / f"{chart.id}.svg", svg), (out_dir / f"{chart.id}.png", png)):
            try:
                if isinstance(write, str):
                    path.write_text(write, encoding="utf-8")
                else:
                    path.write_bytes(write)
            except OSError as exc:
                raise ResultsError(
                    f"cannot write {path}: {exc}", hint="check its permissions"
                ) from None
            written.append(path)
    return written
