"""When a study stops, and with which error: after each kept run (cancelled, inconsistent data,
a lost worker, a failed run unless the study keeps going), and once it has ended (the failed,
outage and unchecked runs it kept going past). The record is always kept before any of this."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from dbscale import interrupts
from dbscale.errors import Cancelled, InconsistentDataError, RunError, UncheckedError
from dbscale.results.record import RunRecord
from dbscale.run.resume_checks import refused_hint


def stop_after_run(
    record: RunRecord,
    run: str,
    *,
    interrupted_check: bool,
    interrupted_after: bool = False,
    results: Path,
    resume: str,
    keep_going: bool,
    out: Console,
) -> None:
    """Raises what stops the study after run `run` ("run 3 (clients=4 #2)"), or returns (a
    failed run under keep_going is a warning). `resume`: the command that finishes the study."""
    if record.cancelled or interrupted_check or interrupted_after:
        during = "during"
        if interrupted_check:
            during = "during the consistency check after"
        elif interrupted_after and not record.cancelled:
            during = "during the wrap-up after"
        raise Cancelled(
            f"cancelled by {interrupts.cause()} {during} {run}",
            f"what ran, the interrupted run included, is in {results}; {resume} finishes the study",
        )
    consistency = record.consistency
    if consistency is not None and not consistency.ok and not consistency.unfinished:
        raise InconsistentDataError(
            f"{run}: {record.verdict.message}",
            "the run is recorded, marked failed; the lines above name the offending rows. "
            "Reload the data (`dbscale prepare`) before measuring again",
        )
    if record.worker_lost:  # the message names the worker, when and what is kept
        raise RunError(record.verdict.message, f"{resume} runs it again")
    if record.verdict.status != "failed":
        return
    if keep_going:
        out.print(
            f"warning: {run} failed: {record.verdict.message}; keep_going: the study goes on",
            style="bold red", highlight=False, soft_wrap=True,
        )  # fmt: skip
        return
    raise RunError(f"{run} failed: {record.verdict.message}", refused_hint(record))


def stop_after_study(records: Sequence[RunRecord]) -> None:
    """Raises for the runs a study kept going past: failed ones (only under keep_going, else the
    first failure stopped it), outages, and runs whose consistency check could not finish."""
    failed = [r for r in records if r.verdict.status == "failed"]
    if failed:
        keys = ", ".join(r.run_key or r.group_key for r in failed[:5])
        more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
        raise RunError(
            f"{len(failed)} of {len(records)} runs failed ({keys}{more}); the first: "
            f"{failed[0].verdict.message}",
            "the other points ran (keep_going); the failed runs are in runs.jsonl, marked "
            "failed and left out of the statistics (--resume does not repeat them)",
        )
    outages = [r for r in records if r.verdict.status == "outage"]
    unchecked = [r for r in records if r.consistency and r.consistency.unfinished]
    if outages:
        raise RunError(
            f"{len(outages)} of {len(records)} runs had an outage: {outages[0].verdict.message}",
            "the server stopped answering during those runs; they are in runs.jsonl, marked "
            "`outage`, and left out of the statistics (statistics.include_outages: true "
            "counts them); --resume does not repeat them"
            + (f"; {len(unchecked)} runs' data went unchecked" if unchecked else ""),
        )
    if unchecked:
        first = unchecked[0].consistency
        raise UncheckedError(
            f"{len(unchecked)} of {len(records)} runs' consistency check after the "
            f"run could not finish: {first.error if first else ''}",
            "those runs keep their own verdicts and are in runs.jsonl; fix what stopped the "
            "check, then check the data: dbscale check WORKLOAD --target URL",
        )
