"""`dbscale report DIR [--images]`, and the report every `dbscale run` writes when it ends (Ctrl-C
included, for the runs that finished). A report that cannot be drawn never fails a run: the run's
results are already safe in runs.jsonl, so the run prints a warning and a hint instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rich.console import Console

from dbscale.errors import DbscaleError
from dbscale.report.writer import ReportFiles, default_cache_dir, write_report
from dbscale.results.directory import RUNS_FILE


def report(directory: Path, *, images: bool, env: Mapping[str, str], out: Console) -> ReportFiles:
    """Writes DIR/report.html (and the images) and says where."""
    files = write_report(directory, images=images, cache_dir=default_cache_dir(env))
    out.print(
        f"report: {files.html} ({files.size_bytes / 1e6:.1f} MB, {len(files.charts)} charts)",
        highlight=False,
        soft_wrap=True,
    )
    if files.images:
        out.print(
            f"images: {len(files.images)} files in {files.images[0].parent}",
            highlight=False,
            soft_wrap=True,
        )
    for note in files.warnings:
        out.print(f"warning: {note}", highlight=False, soft_wrap=True)
    return files


def report_after_run(directory: Path, *, env: Mapping[str, str], err: Console) -> None:
    """The end-of-run report; failures become one warning line, never an error (and never a
    second `hint:` beside the error that may have ended the study)."""
    if not (directory / RUNS_FILE).is_file():
        return
    try:
        report(directory, images=False, env=env, out=err)
    except DbscaleError as exc:
        err.print(
            f"warning: no report drawn: {exc.message} (`dbscale report {directory}` draws it "
            "once that is fixed)",
            highlight=False,
            soft_wrap=True,
        )
    except Exception as exc:  # a report bug must not turn a finished study into a failure
        err.print(
            f"warning: no report drawn: {type(exc).__name__}: {exc} (a dbscale bug; the "
            f"results are safe; `dbscale report {directory}` retries)",
            highlight=False,
            soft_wrap=True,
        )
