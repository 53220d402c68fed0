"""The capacity search on synthetic systems with known answers."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from dbscale.capacity.search import CapacityAnswer, CapacitySearch, Phase


def run(search: CapacitySearch, passes: Callable[[float], bool]) -> CapacityAnswer:
    while (level := search.next_level()) is not None:
        search.observe(level, passes(level))
    return search.answer()


def test_a_sharp_knee_is_found_within_the_resolution() -> None:
    for knee in (137.0, 1000.0, 2345.6, 50_000.0):
        answer = run(CapacitySearch(start=knee / 3, floor=1, ceiling=1e6), lambda x, k=knee: x <= k)
        assert answer.capacity is not None
        assert knee / 1.02 <= answer.capacity <= knee, (knee, answer)
        assert answer.lowest_fail is not None and answer.lowest_fail <= answer.capacity * 1.02
        # Bracketing and bisection take logarithmically many levels, plus 3 confirmations.
        assert answer.levels_run <= 20
        confirmations = [o for o in answer.observations if o.phase is Phase.CONFIRM]
        assert len(confirmations) == 3 and all(o.level == answer.capacity for o in confirmations)


def test_a_gradual_knee_passes_by_probability_and_the_answer_is_confirmed() -> None:
    rng = random.Random(7)

    def passes(x: float) -> bool:  # certain below 900, never above 1100, a ramp between
        chance = min(max((1100 - x) / 200, 0.0), 1.0)
        return rng.random() < chance

    found = [run(CapacitySearch(start=500, floor=1, ceiling=1e5), passes).capacity
             for _ in range(20)]  # fmt: skip
    assert all(c is not None and 880 <= c <= 1100 for c in found), found


def test_noise_that_flips_single_runs_never_yields_an_unconfirmed_answer() -> None:
    rng = random.Random(3)

    def passes(x: float) -> bool:  # the knee at 2000; one level in ten flips
        truth = x <= 2000
        return truth if rng.random() > 0.1 else not truth

    for _ in range(30):
        answer = run(CapacitySearch(start=700, floor=1, ceiling=1e5), passes)
        if answer.capacity is None:
            continue
        last = answer.observations[-3:]
        assert all(o.phase is Phase.CONFIRM and o.passed for o in last)
        assert answer.capacity <= 2000 * 1.35  # three flipped confirmations in a row: rare


def test_a_system_that_never_passes_says_so() -> None:
    answer = run(CapacitySearch(start=100, floor=1, ceiling=1e4), lambda x: False)
    assert answer.capacity is None and answer.floor_failed
    assert answer.observations[-1].level == 1


def test_a_system_that_passes_at_the_ceiling_says_the_capacity_may_be_higher() -> None:
    answer = run(CapacitySearch(start=100, floor=1, ceiling=800), lambda x: True)
    assert answer.capacity == 800 and answer.at_ceiling


def test_integer_knobs_step_by_whole_numbers() -> None:
    answer = run(CapacitySearch(start=4, floor=1, ceiling=64, integer=True), lambda x: x <= 11)
    assert answer.capacity == 11 and answer.lowest_fail == 12
    assert all(float(o.level).is_integer() for o in answer.observations)


def test_a_failed_confirmation_steps_down_and_confirms_the_level_below() -> None:
    search = CapacitySearch(start=300, floor=1, ceiling=1e5)
    flipped = []

    def passes(x: float) -> bool:
        if search.phase is Phase.CONFIRM and not flipped:  # the first confirmation fails
            flipped.append(x)
            return False
        return x <= 1000

    answer = run(search, passes)
    [failed] = flipped
    assert answer.capacity is not None and answer.capacity < failed
    assert answer.capacity >= failed / 1.02 / 1.02  # one resolution step down (or two)
    assert answer.lowest_fail == failed
    assert [o.passed for o in answer.observations[-3:]] == [True, True, True]


@pytest.mark.parametrize("bad", [{"floor": 0}, {"floor": 10, "ceiling": 5}, {"resolution": 0}])
def test_bad_bounds_are_refused(bad: dict[str, float]) -> None:
    settings = {"start": 5.0, "floor": 1.0, "ceiling": 100.0, **bad}
    with pytest.raises(ValueError):
        CapacitySearch(**settings)  # type: ignore[arg-type]


def test_a_caller_that_rounds_levels_below_the_ceiling_still_stops_there() -> None:
    """The driver runs levels rounded to 4 digits: 1378.5 runs as 1378. A level that passes
    just under the ceiling is the ceiling; the search must not ask for it again and again."""
    search = CapacitySearch(start=689.25, floor=1.1, ceiling=1378.5, confirm=2)
    levels = []
    while (level := search.next_level()) is not None:
        ran = float(f"{level:.4g}")
        levels.append(ran)
        search.observe(ran, True)
    answer = search.answer()
    assert answer.capacity == 1378 and answer.at_ceiling
    assert len(levels) <= 5, levels


def test_a_caller_that_rounds_levels_above_the_floor_still_stops_there() -> None:
    search = CapacitySearch(start=4.4, floor=1.1, ceiling=10, confirm=2)
    levels = []
    while (level := search.next_level()) is not None:
        ran = float(f"{level:.1g}")  # 1.1 runs as 1
        levels.append(ran)
        search.observe(ran, False)
    assert search.answer().floor_failed or search.answer().capacity is None
    assert len(levels) <= 5, levels


def test_a_level_too_short_to_judge_ends_the_search_undecided() -> None:
    search = CapacitySearch(start=100, floor=1, ceiling=1e4)
    search.observe(100, True)
    level = search.next_level()
    assert level == 200
    search.stop_short(level)
    assert search.next_level() is None
    answer = search.answer()
    # Not the passing 100 (never confirmed), not "nothing passed down to the floor".
    assert answer.capacity is None and answer.short_level == 200 and not answer.floor_failed
    assert answer.highest_pass == 100 and answer.levels_run == 2


Measure = Callable[[float], tuple[bool, float]]


def run_measured(search: CapacitySearch, measure: Measure) -> CapacityAnswer:
    """`measure(level)`: the level's verdict and the throughput it achieved."""
    while (level := search.next_level()) is not None:
        passed, achieved = measure(level)
        search.observe(level, passed, achieved)
    return search.answer()


def test_a_target_that_slows_during_the_search_ends_it_without_an_answer() -> None:
    """The tour's case: 1,300/s passes early, then the server serves less and less (to 800/s);
    the search must not walk down with it to an answer that is the drift's."""
    runs = [0]

    def measure(x: float) -> tuple[bool, float]:
        runs[0] += 1
        capacity = max(1300.0 - 60 * max(runs[0] - 6, 0), 800.0)
        return x <= capacity, min(x, capacity * 1.05)

    answer = run_measured(CapacitySearch(start=1100, floor=1, ceiling=3000, confirm=2), measure)
    assert answer.capacity is None and answer.drift is not None, answer
    assert not answer.floor_failed and not answer.exhausted
    drift = answer.drift
    assert drift.kind == "slower"
    passed_high = [o for o in answer.observations if o.level == drift.high]
    assert passed_high[0].passed and passed_high[-1].phase is Phase.RECHECK
    assert not passed_high[-1].passed


def test_a_steady_gradual_knee_is_never_taken_for_drift() -> None:
    """Verdicts that contradict each other across the ramp, but each level delivers what it is
    offered: the search measures again and still answers."""
    rng = random.Random(11)

    def measure(x: float) -> tuple[bool, float]:
        chance = min(max((1100 - x) / 200, 0.0), 1.0)
        return rng.random() < chance, x * rng.uniform(0.97, 1.0)

    for _ in range(20):
        answer = run_measured(CapacitySearch(start=500, floor=1, ceiling=1e5), measure)
        assert answer.drift is None
        assert answer.capacity is not None and 880 <= answer.capacity <= 1100, answer


def test_a_stall_is_measured_against_the_pass_above_and_the_search_goes_on() -> None:
    """Runs 10 to 12 fail whatever their level (a checkpoint's stall, a vacuum): the fail well
    below a pass makes the search measure that pass again; it holds (the stall is over), so the
    stall's fails do not bound the answer."""
    runs = [0]

    def measure(x: float) -> tuple[bool, float]:
        runs[0] += 1
        if 10 <= runs[0] <= 12:
            return False, min(x, 1250.0) * 0.95
        return x <= 1200, min(x, 1250.0)

    answer = run_measured(CapacitySearch(start=600, floor=1, ceiling=1e5, confirm=2), measure)
    phases = [o.phase for o in answer.observations]
    assert Phase.RECHECK in phases, answer.observations
    assert answer.drift is None and answer.capacity is not None, answer
    assert 1200 / 1.02 / 1.02 <= answer.capacity <= 1200, answer


def test_a_search_out_of_levels_has_no_unconfirmed_answer() -> None:
    search = CapacitySearch(start=100, floor=1, ceiling=1e4, max_levels=3)
    answer = run(search, lambda x: x <= 150)
    assert answer.exhausted and answer.capacity is None and not answer.floor_failed
    assert answer.highest_pass is not None


def test_a_level_that_delivers_far_less_than_a_lower_pass_did_is_checked_at_once() -> None:
    """After 280/s passed, the target slows to 33/s: the next level above fails delivering a
    tenth of what 280 did, so 280 is measured again at once (no walk through the bracket)."""
    runs = [0]

    def measure(x: float) -> tuple[bool, float]:
        runs[0] += 1
        capacity = 300.0 if runs[0] <= 4 else 33.0
        return x <= capacity * 0.95, min(x, capacity)

    answer = run_measured(CapacitySearch(start=180, floor=1, ceiling=400, confirm=1), measure)
    assert answer.drift is not None and answer.capacity is None, answer.observations
    assert answer.levels_run <= 6, answer.observations
    assert answer.observations[-1].phase is Phase.RECHECK


def test_a_steady_target_past_its_knee_is_not_taken_for_drift() -> None:
    """Levels over the knee deliver the knee's throughput, no less: no recheck, an answer."""
    answer = run_measured(CapacitySearch(start=300, floor=1, ceiling=1e4),
                          lambda x: (x <= 1000, min(x, 1040.0)))  # fmt: skip
    assert answer.capacity is not None and 980 <= answer.capacity <= 1000
    assert Phase.RECHECK not in {o.phase for o in answer.observations}
