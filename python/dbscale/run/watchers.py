"""What a study tells those watching it from outside the terminal (the live package's metrics
endpoint): each run as it begins, its intervals as the runner polls them, its messages, its record
once kept, and the study's end. The runner knows nothing of who listens; `WatchedProgress` hands
the display's feed on to a watcher beside the display."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.console import Console

from dbscale.core.result import Interval
from dbscale.results.record import RunRecord
from dbscale.run.progress import RunProgress, RunSlot


@dataclass(frozen=True)
class RunLabels:
    """Who a run is, as a watcher labels its figures, and where the study stands as it begins.
    `phase`: warmup or measured; `runs_done`/`runs_total`: the study's runs, warm-ups included;
    `nodes`: a cluster's node names in the order of the intervals' per-node counts."""

    study: str
    point: str
    run: str
    target: str
    phase: str
    clients: int
    rate_tps: float | None
    runs_done: int
    runs_total: int
    eta_s: float | None
    nodes: tuple[str, ...] = ()
    ramp_s: float = 0.0


class StudyWatcher(Protocol):
    def run_began(self, labels: RunLabels) -> None: ...
    def intervals(self, intervals: Sequence[Interval]) -> None: ...
    def note(self, message: str) -> None: ...
    def run_kept(self, record: RunRecord) -> None: ...


class WatchedProgress:
    """A RunProgress that also feeds a watcher: the display stays as it is."""

    def __init__(self, inner: RunProgress, watcher: StudyWatcher) -> None:
        self.inner, self.watcher = inner, watcher
        self.console: Console = inner.console

    def begin(self, slot: RunSlot) -> None:
        self.inner.begin(slot)

    def update(self, intervals: Sequence[Interval]) -> None:
        self.inner.update(intervals)
        self.watcher.intervals(intervals)

    def note(self, message: str) -> None:
        self.inner.note(message)
        self.watcher.note(message)

    def end(self) -> None:
        self.inner.end()
