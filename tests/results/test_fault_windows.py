"""A fault step's cost from a run's own figures: its unavailability window over the whole target
and per node, the failures until throughput is back, and the time back to 90% of it."""

from __future__ import annotations

from dbscale.core.result import Gap, Interval, NodeAvailability, NodeFigures, RunResult
from dbscale.results.fault_windows import FaultEvent, describe, fault_windows, window_at


def _availability(first: float, last: float, *gaps: tuple[float, float]) -> NodeAvailability:
    return NodeAvailability(
        first_success_s=first,
        last_success_s=last,
        gaps=[Gap(from_s=a, to_s=b) for a, b in gaps],
    )


def test_a_window_is_the_gap_the_step_opened_even_when_in_flight_work_finished_after_it() -> None:
    seen = _availability(0.0, 20.0, (2.1, 2.2), (6.02, 12.07))
    window = window_at(seen, 6.0, 12.0)
    assert (window.last_success_s, window.first_success_s, window.seconds) == (6.02, 12.07, 6.05)
    assert window_at(seen, 14.0, 20.0).seconds == 0.0, "successes went on"


def test_a_node_that_never_served_again_has_an_open_window() -> None:
    gone = _availability(0.0, 4.21)
    window = window_at(gone, 4.0, 12.0)
    assert (window.last_success_s, window.first_success_s, window.seconds) == (4.21, None, None)
    promoted = _availability(5.6, 12.0)
    assert window_at(promoted, 5.0, 12.0).seconds == 0.6  # from the step to its first success


def _run() -> RunResult:
    intervals = [
        Interval(t_s=t, transactions=n, tps=float(n), failed=f)
        for t, n, f in [(1, 100, 0), (2, 100, 0), (3, 100, 0), (4, 10, 3), (5, 0, 0),
                        (6, 95, 0), (7, 100, 0), (8, 100, 0)]
    ]  # fmt: skip
    intervals[4] = intervals[4].model_copy(update={"failovers": 2})
    return RunResult(
        duration_s=8.0,
        intervals=intervals,
        availability=_availability(0.0, 8.0, (3.2, 5.1)),
        nodes=[
            NodeFigures(node="n1", availability=_availability(0.0, 3.2)),
            NodeFigures(node="n2", availability=_availability(5.1, 8.0)),
        ],
    )


def test_the_cost_of_a_kill_and_a_promotion() -> None:
    events = [
        FaultEvent(action="kill", node="primary", node_name="n1", planned_s=3.0, done_s=3.0),
        FaultEvent(action="promote", node="standby", node_name="n2", planned_s=4.0, done_s=4.0),
    ]
    kill, promote = fault_windows(_run(), events)
    assert kill.overall.seconds == 1.9 and kill.before_tps == 100.0
    assert kill.failed == 3 and kill.recovered_after_s is None  # not back before the promotion
    # The clients moved to the promoted node in the second after the promotion: its count.
    assert kill.failovers == 0 and promote.failovers == 2
    assert kill.nodes[0].seconds is None and kill.nodes[0].last_success_s == 3.2
    assert promote.recovered_after_s == 2.0  # the second ending at 6 s: 95 >= 90% of 100
    assert promote.after_tps == 100.0 and promote.planned_node == "standby"
    text = describe(kill)
    assert text.startswith("kill n1 at 3.00 s: no success for 1.900 s (3.20-5.10 s); 3 failed")
    assert "not back to 90% of 100 tps" in text
    assert describe(promote).endswith("back to 90% of 100 tps after 2.0 s")


def test_steps_in_one_stretch_count_each_failure_once() -> None:
    """Three kills 3 s apart and no success between them: the run's 4 failures are counted
    once, by the step whose window first holds them (issue 40)."""
    intervals = [
        Interval(t_s=float(t), transactions=n, tps=float(n), failed=f, errors=f)
        for t, n, f in [(1, 100, 0), (2, 100, 0), (3, 0, 2), (4, 0, 0), (5, 0, 0), (6, 0, 1),
                        (7, 0, 0), (8, 0, 0), (9, 0, 1), (10, 0, 0), (11, 0, 0), (12, 0, 0)]
    ]  # fmt: skip
    run = RunResult(duration_s=12.0, intervals=intervals, failed=4,
                    availability=_availability(0.0, 2.5))  # fmt: skip
    events = [FaultEvent(action="kill", node=f"n{k}", node_name=f"n{k}", planned_s=at, done_s=at)
              for k, at in ((1, 2.5), (2, 5.5), (3, 8.5))]  # fmt: skip
    windows = fault_windows(run, events)
    assert [w.failed for w in windows] == [2, 1, 1]
    assert sum(w.errors for w in windows) == 4
