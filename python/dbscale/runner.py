"""Runs a plan: each planned run goes to the native core once as JSON, its per-second intervals
are polled for the live display, and its result is appended to runs.jsonl the moment it ends.
Ctrl-C once asks the core to stop at the next transaction boundary, twice to abandon transactions
in flight; either way the partial run is recorded (marked cancelled), the summary written, and the
command exits 130.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rich.console import Console

from dbscale.errors import Cancelled, RunError
from dbscale.native import load_core, parse_json, translate
from dbscale.plan import PlannedRun, RunPlan
from dbscale.progress import RunProgress
from dbscale.results import ResultsDir, RunMeta, make_record, utc_now
from dbscale.summary import print_run, print_summary

POLL_INTERVAL_S = 0.2


@dataclass
class RunOutcome:
    """A finished (or cancelled) run: the native result and when it ran."""

    native: dict[str, Any]
    cancelled: bool
    started_at: datetime
    ended_at: datetime


@dataclass
class PlanOutcome:
    records: list[dict[str, Any]] = field(default_factory=list)


def run_one(planned: PlannedRun, progress: RunProgress, index: int, total: int) -> RunOutcome:
    """Starts one run in the native core and follows it to its end."""
    core = load_core()
    started = utc_now()
    try:
        handle = core.start_run(planned.config.to_core_json())
    except Exception as exc:
        raise translate(exc) from None
    progress.begin(planned.label, index, total, planned.config.duration_s)
    cancel_requested = False
    try:
        while True:
            try:
                finished = bool(handle.wait(POLL_INTERVAL_S))
                progress.update(parse_json(handle.poll(), "poll"))
                if finished:
                    text = handle.result()
                    break
            except KeyboardInterrupt:
                # The first Ctrl-C stops at the next transaction boundary; a second one
                # abandons transactions in flight. Either way the run's result is recorded.
                handle.cancel()
                if cancel_requested:
                    progress.note("Ctrl-C again: abandoning transactions in flight")
                else:
                    progress.note(
                        "Ctrl-C: stopping at the next transaction boundary and keeping what "
                        "ran (Ctrl-C again stops at once)"
                    )
                cancel_requested = True
    except Cancelled:
        raise
    except Exception as exc:
        raise translate(exc) from None
    finally:
        progress.end()
    native = parse_json(text, "run result")
    if not isinstance(native, dict):
        raise RunError("the native run result is not a JSON object")
    cancelled = cancel_requested or bool(native.get("cancelled"))
    return RunOutcome(native, cancelled, started, utc_now())


def execute_plan(
    plan: RunPlan,
    url: str,
    *,
    results: ResultsDir,
    progress: RunProgress,
    out: Console,
    version: str,
) -> PlanOutcome:
    """Every planned run in order; the summary is written and printed however it ends."""
    outcome = PlanOutcome()
    planned_runs = plan.runs(url)
    try:
        for index, planned in enumerate(planned_runs, start=1):
            done = run_one(planned, progress, index, len(planned_runs))
            record = make_record(
                done.native,
                RunMeta(
                    started_at=done.started_at,
                    ended_at=done.ended_at,
                    config=planned.config.redacted(),
                    warmup=planned.warmup,
                    dbscale_version=version,
                    cancelled=done.cancelled,
                ),
            )
            results.append(record)
            results.write_summary()
            outcome.records.append(record)
            print_run(out, record, planned.label)
            if done.cancelled:
                raise Cancelled(f"cancelled by Ctrl-C during run {index} ({planned.label})")
            verdict = record.get("verdict") or {}
            if verdict.get("status") == "failed":
                raise RunError(f"run {index} ({planned.label}) failed: {verdict.get('message')}")
    finally:
        if results.records:
            results.write_summary()
            print_summary(out, outcome.records, results.path)
    return outcome
