"""Outages found in a run's per-second intervals: stretches in which no transaction completed
while the clients were reconnecting (connection errors) or, in a closed loop without pacing,
waiting on the server for two seconds or more. A run with an outage gets the verdict `outage`
naming when and how long each lasted, and stays out of its point's statistics (it stays in
runs.jsonl) unless the plan's `statistics.include_outages` says otherwise: a server that was
down for 60% of a run must not pass for a slow server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dbscale.core.result import Interval
from dbscale.results.record import RunRecord

STALL_S = 2.0  # zero completions this long, with no error, is a stall (a held lock, a hang)


@dataclass(frozen=True)
class Outage:
    start_s: float  # since the measured start
    length_s: float
    errors: int

    def describe(self) -> str:
        cause = f"{self.errors} connection or query errors" if self.errors else "no errors"
        return (f"no transaction completed for {self.length_s:.1f} s from {self.start_s:.1f} s "
                f"({cause})")  # fmt: skip


def _windows(intervals: Sequence[Interval]) -> list[list[tuple[float, Interval]]]:
    """Maximal runs of intervals without a completed transaction, each with its start time."""
    windows: list[list[tuple[float, Interval]]] = []
    current: list[tuple[float, Interval]] = []
    previous_end = 0.0
    for interval in intervals:
        if interval.transactions == 0:
            current.append((previous_end, interval))
        elif current:
            windows.append(current)
            current = []
        previous_end = interval.t_s
    if current:
        windows.append(current)
    return windows


def find_outages(record: RunRecord) -> list[Outage]:
    """The record's outages (none for a run that completed nothing at all: that one failed)."""
    if record.transactions == 0 or record.cancelled:
        return []
    paced = (record.tpcc is not None and record.tpcc.wait) or record.rate_tps is not None
    found = []
    for window in _windows(record.window_intervals):
        start = window[0][0]
        length = window[-1][1].t_s - start
        errors = sum(interval.errors for _, interval in window)
        if errors > 0 or (not paced and length >= STALL_S):
            found.append(Outage(start, length, errors))
    return found


def outage_verdict(record: RunRecord, outages: Sequence[Outage]) -> dict[str, object]:
    """The `outage` verdict of a record with these outages."""
    down = sum(o.length_s for o in outages)
    share = 100.0 * down / record.duration_s if record.duration_s else 0.0
    parts = "; ".join(o.describe() for o in outages)
    return {
        "status": "outage",
        # The status says `outage`; the message says what happened (shown after the status).
        "message": f"{parts}; {share:.0f}% of the run; {record.verdict.message}",
    }
