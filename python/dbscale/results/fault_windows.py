"""What each fault step of a run cost, from the run's own figures: the unavailability window
(the last success before the step and the first after it, over the whole target and per node,
to the millisecond from the core's availability tracking), the errors and failed transactions
in it, and the time until throughput was back to 90% of what it was before the step.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from dbscale.core.result import Interval, NodeAvailability, RunResult

RECOVERED_SHARE = 0.9  # "full throughput": this share of the throughput before the fault


class FaultEvent(BaseModel):
    """One fault step as it happened; times in seconds from the measured start."""

    model_config = ConfigDict(frozen=True)

    action: str
    node: str  # as the plan named it
    node_name: str | None = None  # the node it acted on (n1, n2, ...)
    planned_s: float
    done_s: float | None = None  # when the action began
    took_s: float | None = None
    error: str | None = None
    # What the step changed beyond the node itself: a promoted primary left without a standby
    # commits asynchronously, a weaker durability than the scenario's (the run is flagged).
    weakened: str | None = None


class NodeRoles(BaseModel):
    """A cluster node's role as a run with fault steps began and as it ended (before the
    cluster was made whole again): after a promotion the standby is another node."""

    model_config = ConfigDict(frozen=True)

    node: str  # n1, n2, ...
    before: str
    after: str

    def words(self) -> str:
        return self.before if self.before == self.after else f"{self.before} → {self.after}"


class Window(BaseModel):
    """A stretch without successes around a moment: the last success before it and the first
    after it (None: none before, or none until the run's end)."""

    model_config = ConfigDict(frozen=True)

    last_success_s: float | None = None
    first_success_s: float | None = None
    seconds: float | None = None  # None: open (no success after, until the end)


class NodeWindow(Window):
    node: str


class FaultWindow(BaseModel):
    """One fault step's cost to the run; times in seconds from the measured start."""

    model_config = ConfigDict(frozen=True)

    action: str
    node: str | None  # the node it acted on (n1, n2, ...)
    planned_node: str | None = None  # as the plan named it (n2, primary, standby)
    at_s: float
    error: str | None = None
    weakened: str | None = None  # the event's, kept with its window
    overall: Window
    nodes: list[NodeWindow]
    failed: int = 0  # transactions that failed from the step to throughput's return
    errors: int = 0
    failovers: int = 0  # clients that moved to another node in that time
    before_tps: float | None = None
    recovered_after_s: float | None = None  # None: not back to 90% before the run ended
    after_tps: float | None = None  # from the recovery (or the step) to the next step or end


def window_at(availability: NodeAvailability | None, at: float, until: float) -> Window:
    """The first stretch without successes that a step at `at` opened or fell in: one that
    contains `at`, or begins after it (transactions in flight at the step still finish) and
    before `until` (the next step, or the end). Zero seconds when successes went on."""
    if availability is None:
        return Window()
    first, last = availability.first_success_s, availability.last_success_s
    if first is None or last is None:
        return Window()
    for gap in availability.gaps:
        if gap.to_s >= at and gap.from_s < until:
            return Window(
                last_success_s=gap.from_s,
                first_success_s=gap.to_s,
                seconds=round(gap.to_s - gap.from_s, 4),
            )
    if at < first < until:  # nothing served before: from the step to its first success
        return Window(first_success_s=first, seconds=round(first - max(at, 0.0), 4))
    if (last < until and at <= last + 0.1) or at > last:
        return Window(last_success_s=last, first_success_s=None, seconds=None)
    return Window(seconds=0.0)


def fault_windows(result: RunResult, events: Sequence[FaultEvent]) -> list[FaultWindow]:
    """Each fault step's window, errors and recovery, in the order they ran. Recovery is
    measured against the throughput before the first step (the cluster whole)."""
    intervals = [i for i in result.intervals if not i.drain]
    end_s = result.duration_s
    times = [e.done_s if e.done_s is not None else e.planned_s for e in events]
    first_at = times[0] if times else end_s
    before = _mean_tps([i for i in intervals if i.t_s <= first_at])
    out: list[FaultWindow] = []
    charged: set[float] = set()  # the seconds an earlier step counted
    for n, event in enumerate(events):
        at = times[n]
        following = times[n + 1] if n + 1 < len(times) else end_s
        recovered = _recovery(intervals, at, following, before)
        upto = at + recovered if recovered is not None else following
        # Each second is charged to one step: the last that began before the second ended
        # (the steps of one stretch without a success would otherwise each count the same
        # failures; what fails after the next step began is that step's).
        until = min(upto + _step(intervals), following) if n + 1 < len(times) else upto + 1e9
        inside = [i for i in intervals if at < i.t_s <= until and i.t_s not in charged]
        charged.update(i.t_s for i in inside)
        after = _mean_tps([i for i in intervals if upto < i.t_s <= following])
        out.append(
            FaultWindow(
                action=event.action,
                node=event.node_name,
                planned_node=event.node,
                at_s=round(at, 4),
                error=event.error,
                weakened=event.weakened,
                overall=window_at(result.availability, at, following),
                nodes=[
                    NodeWindow(
                        node=node.node, **window_at(node.availability, at, following).model_dump()
                    )
                    for node in result.nodes
                ],
                failed=sum(i.failed for i in inside),
                errors=sum(i.errors for i in inside),
                failovers=sum(i.failovers for i in inside),
                before_tps=round(before, 2) if before is not None else None,
                recovered_after_s=round(recovered, 3) if recovered is not None else None,
                after_tps=round(after, 2) if after is not None else None,
            )
        )
    return out


def _step(intervals: Sequence[Interval]) -> float:
    return intervals[0].t_s if intervals else 1.0


def _mean_tps(intervals: Sequence[Interval]) -> float | None:
    if not intervals:
        return None
    return sum(i.tps for i in intervals) / len(intervals)


def _recovery(
    intervals: Sequence[Interval], at: float, until: float, before: float | None
) -> float | None:
    """Seconds from the step to the end of the first whole interval after it at 90% of the
    throughput before it; None when that never came before `until`."""
    if before is None or before <= 0:
        return None
    step = _step(intervals)
    for interval in intervals:
        begins = interval.t_s - step
        if begins < at - 0.01 or interval.t_s > until + 1e-9:
            continue
        if interval.tps >= RECOVERED_SHARE * before:
            return interval.t_s - at
    return None


def describe(window: FaultWindow) -> str:
    """One line: `kill n2 at 10.02 s: no success for 0.84 s (9.98-10.82 s); 3 failed; back
    to 90% of 812 tps after 2.0 s`."""
    head = f"{window.action} {window.node or '?'} at {window.at_s:.2f} s"
    if window.weakened:
        head = f"{head} ({window.weakened})"
    if window.error:
        return f"{head}: the step failed ({window.error})"
    overall = window.overall
    if overall.seconds is None and overall.last_success_s is not None:
        gap = f"no success from {overall.last_success_s:.2f} s to the end"
    elif overall.seconds:
        gap = (
            f"no success for {overall.seconds:.3f} s "
            f"({overall.last_success_s or 0:.2f}-{overall.first_success_s or 0:.2f} s)"
        )
    else:
        gap = "successes went on (no stretch of 100 ms without one)"
    parts = [gap]
    if window.failed:
        parts.append(f"{window.failed} failed")
    if window.failovers:
        parts.append(f"{window.failovers} failover(s)")
    if window.recovered_after_s is not None and window.before_tps is not None:
        parts.append(
            f"back to 90% of {window.before_tps:.0f} tps after {window.recovered_after_s:.1f} s"
        )
    elif window.before_tps is not None:
        parts.append(f"not back to 90% of {window.before_tps:.0f} tps before the next step or end")
    return f"{head}: " + "; ".join(parts)
