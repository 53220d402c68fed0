"""What the observer keeps while a run goes on, kept small: a soak of an hour or a week must grow
only by what the run's record holds per second. Resource rows are stored as arrays of floats
with shared column names (a dict of 50 floats costs ten times as much); server statistics keep,
per stretch the session saw, the snapshot that anchors the measured start and the latest one
(plus the few MySQL gauges the record averages); wait samples older than a few seconds are folded
into the run's wait histogram once the measured start is known.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbscale.observe.resources import Row
from dbscale.observe.server_stats import Snapshot
from dbscale.observe.waits import WaitHistogram

ANCHOR_SLACK_S = 0.25  # a snapshot this soon after the start still anchors the window
RAW_WAITS_S = 5.0  # wait samples kept as they came, the rest folded into the histogram


class CompactRows:
    """(time, row) pairs; each row an array of floats over a column tuple shared by rows."""

    def __init__(self) -> None:
        self._columns: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._rows: list[tuple[float, tuple[str, ...], array[float]]] = []

    def append(self, t: float, row: Row) -> None:
        names = tuple(row)
        names = self._columns.setdefault(names, names)
        self._rows.append((t, names, array("d", (float(row[n]) for n in names))))

    def __iter__(self) -> Iterator[tuple[float, Row]]:
        for t, names, values in self._rows:
            yield t, dict(zip(names, values, strict=True))

    def last(self, n: int) -> list[Row]:
        return [dict(zip(names, values, strict=True)) for _, names, values in self._rows[-n:]]


StatsEntry = tuple[float, Snapshot, int]  # time, snapshot, the observer's queries so far


@dataclass
class _Segment:
    entries: list[StatsEntry] = field(default_factory=list)
    gauges: list[tuple[float, dict[str, float]]] = field(default_factory=list)


class StatsTrail:
    """Server statistics snapshots, pruned to what the record needs once the start is known."""

    def __init__(self, gauge_names: Sequence[str]) -> None:
        self.gauge_names = tuple(gauge_names)
        self._segments = [_Segment()]
        self._start: float | None = None
        self._early: list[float] = []  # snapshot times until the start is known
        self._since_start = 0  # snapshots taken at or after the start
        self._taken = 0

    def add(self, entry: StatsEntry) -> None:
        segment = self._segments[-1]
        segment.entries.append(entry)
        t, snap = entry[0], entry[1]
        gauges = {n: snap[n] for n in self.gauge_names if n in snap}
        if gauges:
            segment.gauges.append((t, gauges))
        self._taken += 1
        if self._start is None:
            self._early.append(t)
        elif t >= self._start:
            self._since_start += 1
        self._prune(segment)

    def new_segment(self) -> None:
        """The session reconnected: counters are differenced within each segment only."""
        self._segments.append(_Segment())

    def start_at(self, start: float) -> None:
        self._start = start
        self._since_start = sum(1 for t in self._early if t >= start)
        self._early = []
        for segment in self._segments:
            self._prune(segment)

    def first(self) -> bool:
        return self._taken == 1

    def count(self, start: float, end: float) -> int:
        """Snapshots taken in the window (queries the observer sent the server)."""
        if self._start is None:
            return sum(1 for t in self._early if start <= t <= end)
        return self._since_start

    def _prune(self, segment: _Segment) -> None:
        """Keeps the anchor (the last snapshot at or before the start) and the latest."""
        if self._start is None or len(segment.entries) <= 2:
            return
        limit = self._start + ANCHOR_SLACK_S
        before = [e for e in segment.entries if e[0] <= limit]
        anchor = before[-1:] or segment.entries[:1]
        segment.entries = [*anchor, segment.entries[-1]]

    def segments(self) -> list[list[StatsEntry]]:
        """Each stretch's entries (anchor first, latest last); only those with two or more."""
        return [list(s.entries) for s in self._segments if len(s.entries) >= 2]

    def gauges(self, start: float, end: float) -> list[Snapshot]:
        return [g for s in self._segments for t, g in s.gauges if start <= t <= end]


class WaitTrail:
    """Wait samples; once the start is known, those older than RAW_WAITS_S go into a histogram."""

    def __init__(self) -> None:
        self._raw: list[tuple[float, list[list[Any]]]] = []
        self._folded = WaitHistogram()
        self._start: float | None = None

    def add(self, t: float, sample: list[list[Any]]) -> None:
        self._raw.append((t, sample))
        if self._start is not None:
            keep_from = t - RAW_WAITS_S
            while self._raw and self._raw[0][0] < keep_from:
                when, old = self._raw.pop(0)
                if when >= self._start:
                    self._folded.add(old)

    def start_at(self, start: float) -> None:
        self._start = start
        self._raw = [(t, s) for t, s in self._raw if t >= start]

    def count(self, start: float, end: float) -> int:
        """Samples in the window (queries the observer sent the server)."""
        return self._folded.samples + sum(1 for t, _ in self._raw if start <= t <= end)

    def histogram(self, start: float, end: float) -> WaitHistogram:
        """The samples in [start, end] (those folded early all were)."""
        merged = WaitHistogram()
        merged.merge(self._folded)
        for t, sample in self._raw:
            if start <= t <= end:
                merged.add(sample)
        return merged
