"""Outages and stalls found in a run's per-second intervals: stretches in which no transaction
completed. An outage is one with errors or with clients that lost their connections: the server
was gone. A run with an outage gets the verdict `outage` naming when and how long each lasted,
and stays out of its point's statistics (it stays in runs.jsonl) unless the plan's
`statistics.include_outages` says otherwise: a server that was down for 60% of a run must not
pass for a slow server.

A stall is two seconds or more of a closed loop without pacing in which nothing completed, every
client stayed connected and no error came but the server's answers to contention between the
run's own transactions (a deadlock found after `deadlock_timeout`, a lock wait timeout): the
server was up and made them wait (a lock held by another session, a hung statement). That is
the server's behaviour under this load, so the run keeps its verdict and counts in the
statistics; the record names the stall and the run is flagged with a warning. A shorter such
gap is ordinary lock waiting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dbscale import core
from dbscale.core.result import Interval
from dbscale.modes import WorkloadFamily
from dbscale.results.record import RunRecord

STALL_S = 2.0  # zero completions this long, with no error, is a stall (a held lock, a hang)
# Errors that are the server's answer to contention between the run's own transactions (a
# deadlock found after PostgreSQL's 1 s deadlock_timeout, a serialization failure, a lock wait
# that timed out, a concurrent insert of the same key): a gap that ends in them, with every
# client still connected, is a lock wait, not the server gone.
CONTENTION = frozenset({"deadlock", "serialization", "lock_timeout", "unique_violation"})


@dataclass(frozen=True)
class Outage:
    start_s: float  # since the measured start
    length_s: float
    errors: int

    def describe(self) -> str:
        cause = f"{self.errors} connection or query errors" if self.errors else "no errors"
        return (f"no transaction completed for {self.length_s:.1f} s from {self.start_s:.1f} s "
                f"({cause})")  # fmt: skip

    def describe_stall(self) -> str:
        errors = f"{self.errors} lock-conflict errors" if self.errors else "no errors"
        return (f"no transaction completed for {self.length_s:.1f} s from {self.start_s:.1f} s, "
                f"every client connected and waiting, {errors}")  # fmt: skip


Window = list[tuple[float, Interval]]


def _windows(intervals: Sequence[Interval]) -> list[tuple[Window, Interval | None]]:
    """Maximal runs of intervals without a completed transaction, each with its start time,
    and the interval that ended the run (None at the end of the run)."""
    windows: list[tuple[Window, Interval | None]] = []
    current: Window = []
    previous_end = 0.0
    for interval in intervals:
        if interval.transactions == 0:
            current.append((previous_end, interval))
        elif current:
            windows.append((current, interval))
            current = []
        previous_end = interval.t_s
    if current:
        windows.append((current, None))
    return windows


@dataclass(frozen=True)
class Gaps:
    """A run's stretches without a completed transaction: outages and stalls."""

    outages: list[Outage]
    stalls: list[Outage]


def find_gaps(record: RunRecord) -> Gaps:
    """The record's outages and stalls (none for a run that completed nothing at all: that one
    failed)."""
    gaps = Gaps([], [])
    if record.transactions == 0 or record.cancelled:
        return gaps
    paced = (record.tpcc is not None and record.tpcc.wait) or record.rate_tps is not None
    # Analytic queries run for seconds: a quiet stretch without an error is one of them.
    analytic = core.family_of(record.workload) in (WorkloadFamily.TPCH, WorkloadFamily.CH)
    classes = {name for name, n in record.errors.by_class.items() if n}
    contention_only = bool(classes) and classes <= CONTENTION
    for window, ended_by in _windows(record.window_intervals):
        start = window[0][0]
        length = window[-1][1].t_s - start
        # A gap the clients' own deadlines ended (their timeouts fall in the second after it):
        # the server stopped answering, it did not make them wait.
        errors = sum(interval.errors for _, interval in window)
        if ended_by is not None and not contention_only:
            errors += ended_by.errors
        # A counted run's clients leave as they finish their transactions: fewer connected
        # is then no sign of a lost server.
        counted = record.per_client_transactions is not None
        connected = counted or all(
            i.clients_connected is not None and i.clients_connected >= record.clients
            for _, i in window
        )
        long_enough = not paced and not analytic and length >= STALL_S
        answered = errors == 0 or contention_only  # the server was there, and said so
        if answered and connected:
            if long_enough:
                gaps.stalls.append(Outage(start, length, errors))
        elif errors > 0 or long_enough:
            gaps.outages.append(Outage(start, length, errors))
    return gaps


def find_outages(record: RunRecord) -> list[Outage]:
    """The record's outages."""
    return find_gaps(record).outages


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
