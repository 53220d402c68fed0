"""One run driven to its end: the native run (or a scaled-out one) polled for its intervals,
progress shown, observation around it, Ctrl-C turned into a cancel; its outcome for the study
runner (runner.py) to record."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

from dbscale import interrupts
from dbscale.core import Run
from dbscale.core.config import RunConfig
from dbscale.core.result import Interval, RunResult
from dbscale.observe import RunWatch, StudyObserver
from dbscale.observe.section import ObserveSection
from dbscale.results.fault_windows import FaultEvent
from dbscale.run.fault_driver import FaultDriver
from dbscale.run.progress import RunProgress, RunSlot
from dbscale.values import utc_now

POLL_INTERVAL_S = 0.2
GATE_POLL_S = 0.005  # how often a run waiting for its statement snapshot is looked at


@dataclass
class RunOutcome:
    """A finished (or cancelled) run: the native result and when it ran."""

    native: RunResult  # the native result (stats/result.rs), before dbscale's fields
    cancelled: bool
    started_at: datetime
    ended_at: datetime
    observe: ObserveSection | None = None  # observation's section of the record
    faults: list[FaultEvent] = field(default_factory=list)  # the fault steps as they ran
    interrupted_after: bool = False  # a signal came after the run's end, during its wrap-up
    stopped_by: str | None = None  # why `stop_when` stopped it (not a signal)


class RunHandle(Protocol):
    """What `run_one` drives: the core's `Run`, or a scaled-out run over workers."""

    def wait(self, timeout_s: float) -> bool: ...
    def poll(self) -> list[Interval]: ...
    def cancel(self) -> None: ...
    def result(self) -> RunResult: ...
    def since_start(self) -> float | None: ...


def run_one(
    config: RunConfig,
    progress: RunProgress,
    slot: RunSlot,
    observer: StudyObserver | None = None,
    start: Callable[[RunConfig], RunHandle] = Run,
    server_url: str | None = None,
    faults: Callable[[RunHandle], FaultDriver] | None = None,
    stop_when: Callable[[Sequence[Interval]], str | None] | None = None,
) -> RunOutcome:
    """Starts one run (in the native core, or over the study's workers) and follows it to its
    end (observed, if asked). `stop_when`, given the run's intervals so far at each poll, says
    why the run must stop (a threshold clearly broken, --abort-on-fail): the run is then
    cancelled at the next transaction boundary, as on a first Ctrl-C, and recorded so."""
    started = utc_now()
    watch = observer.watch(config, server_url) if observer is not None else None
    # The server's statement figures are read right before the measured window: a run of the
    # core waits for that once connected; a scaled-out run's are read before it starts.
    statements = watch if watch is not None and watch.wants_statement_window else None
    gated = statements is not None and start is Run
    try:
        if statements is not None:
            if not gated:
                statements.open_statement_window()
            config = config.model_copy(update={"statement_timing": True, "wait_for_go": gated})
        handle = start(config)
    except BaseException:
        if watch is not None:
            watch.close()
        raise
    progress.begin(slot)
    cancel_requested = False
    seen: list[Interval] = []  # the run's intervals so far, for stop_when
    stopped_by: str | None = None
    driver = faults(handle) if faults is not None else None
    native: RunResult | None = None
    try:
        if driver is not None:
            driver.__enter__()
        while True:
            try:
                if gated and statements is not None and isinstance(handle, Run):
                    gated = not _opened_window(handle, statements)
                finished = handle.wait(GATE_POLL_S if gated else POLL_INTERVAL_S)
                intervals = handle.poll()
                progress.update(intervals)
                if watch is not None:
                    watch.update(intervals, progress)
                if finished:
                    native = handle.result()
                    break
                if stop_when is not None and not cancel_requested:
                    seen += intervals
                    reason = stop_when(seen)
                    if reason is not None:
                        handle.cancel()
                        progress.note(f"{reason}: stopping at the next transaction boundary")
                        cancel_requested, stopped_by = True, reason
            except KeyboardInterrupt:
                # The first Ctrl-C stops at the next transaction boundary; a second one
                # abandons transactions in flight. Either way the run's result is recorded.
                handle.cancel()
                stopped_by = None  # a signal: the study stops as on Ctrl-C
                cause = interrupts.cause()
                if cancel_requested:
                    progress.note(f"{cause} again: abandoning transactions in flight")
                else:
                    progress.note(
                        f"{cause}: stopping at the next transaction boundary and keeping what "
                        "ran (a second interrupt stops at once)"
                    )
                cancel_requested = True
    finally:
        if native is None:  # the run failed to finish: its clean-up as it goes
            if driver is not None:
                driver.__exit__(None, None, None)
            progress.end()
            if watch is not None:
                watch.close()
    # The result is in hand: an interrupt from here on cuts the rest short, never the record.
    cut: list[str] = []
    if driver is not None:
        _after_run(lambda: driver.__exit__(None, None, None), cut)
    progress.end()
    observed = None
    if watch is not None:
        _after_run(watch.close, cut)
        observed = None if cut else _after_run(lambda: watch.finish(native), cut)
        if observed is None:
            note = f"observation cut short by {interrupts.cause()} after the run"
            observed = ObserveSection(version=1, notes=[note])
    cancelled = cancel_requested or native.cancelled
    events = list(driver.events) if driver is not None else []
    return RunOutcome(native, cancelled, started, utc_now(), observed, events, bool(cut),
                      stopped_by)  # fmt: skip


T = TypeVar("T")


def _opened_window(handle: Run, watch: RunWatch) -> bool:
    """Once the run's clients are connected: the statement snapshot, then the run goes."""
    if not handle.ready():
        return False
    watch.open_statement_window()
    handle.go(0.0)
    return True


def _after_run(step: Callable[[], T], cut: list[str]) -> T | None:
    """A step after the run's end; an interrupt during it is noted in `cut` and ends it."""
    if cut:
        return None
    try:
        return step()
    except KeyboardInterrupt:
        cut.append(interrupts.cause())
        return None
