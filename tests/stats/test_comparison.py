"""A/B change, interval, p-value and verdict on samples with and without a real difference."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from dbscale.stats.comparison import (
    BETTER,
    INCONCLUSIVE,
    SAME,
    TOO_FEW,
    WORSE,
    adjust_and_decide,
    compare_samples,
    detectable_change_pct,
    median_ratio_interval,
    min_runs_per_side,
    runs_per_side,
    verdict_words,
)

scipy_stats = pytest.importorskip("scipy.stats")


def test_the_change_is_the_ratio_of_the_medians_with_a_bootstrap_interval() -> None:
    a = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0]
    b = [1100.0, 1090.0, 1110.0, 1095.0, 1105.0, 1102.0]
    change, low, high = median_ratio_interval(a, b) or (0.0, 0.0, 0.0)
    assert change == pytest.approx(statistics.median(b) / statistics.median(a) - 1, rel=1e-12)
    assert low < change < high
    # the percentile interval of the same statistic from scipy's bootstrap, to its resolution
    ref = scipy_stats.bootstrap(
        (b, a), lambda y, x: statistics.median(y) / statistics.median(x), method="percentile",
        vectorized=False, n_resamples=4000, random_state=1,
    ).confidence_interval  # fmt: skip
    assert low == pytest.approx(ref.low - 1, abs=0.004)
    assert high == pytest.approx(ref.high - 1, abs=0.004)
    assert median_ratio_interval(a, b) == median_ratio_interval(list(reversed(a)), b)
    assert median_ratio_interval([1.0], b) is None


def test_medians_apart_by_5_percent_read_as_5_percent() -> None:
    """The case from the field: a geometric-mean ratio read -0.4% beside medians 5.5% apart."""
    a = [1000.0, 1000.0, 1000.0, 400.0, 1600.0, 1000.0]
    b = [945.0, 945.0, 945.0, 1500.0, 500.0, 945.0]
    c = compare_samples("tps", a, b, higher_is_better=True)
    assert c.change_pct == pytest.approx(-5.5, abs=1e-9)
    assert c.estimate.startswith("ratio of medians")


def test_power_detectable_change_and_runs_needed() -> None:
    spread = 0.05  # 5% run-to-run
    # the normal approximation by hand: 2 (z_.975 + z_.8)^2 s^2 / d^2 / (3/pi)
    z = 1.959964 + 0.841621
    d = math.log1p(0.07)
    assert runs_per_side(spread, 7) == math.ceil(2 * (z * spread / d) ** 2 / (3 / math.pi))
    assert runs_per_side(spread, -7) <= runs_per_side(spread, 7)  # -7% is the larger log shift
    assert runs_per_side(0.001, 50) == 4  # never fewer than Mann-Whitney's floor
    assert detectable_change_pct(spread, 3, 3) is None
    shift = z * spread * math.sqrt((2 / 6) / (3 / math.pi))
    assert detectable_change_pct(spread, 6, 6) == pytest.approx(100 * math.expm1(shift))
    # n runs per side detect what runs_per_side says n runs detect
    n = runs_per_side(spread, 10)
    detectable = detectable_change_pct(spread, n, n)
    assert detectable is not None and detectable <= 10.0
    a, b = samples(1000, 6, 0.05, 11), samples(1000, 6, 0.05, 12)
    c = compare_samples("tps", a, b, higher_is_better=True, detect_pct=5)
    assert c.detectable_pct is not None and c.runs_to_detect is not None and c.runs_to_detect > 6


def samples(mean: float, n: int, cv: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(mean, mean * cv) for _ in range(n)]


def test_a_real_difference_is_called() -> None:
    a, b = samples(1000, 6, 0.01, 1), samples(1100, 6, 0.01, 2)
    [tps] = adjust_and_decide([compare_samples("tps", a, b, higher_is_better=True)], noise_pct=2)
    assert tps.verdict == BETTER
    assert tps.change_pct == pytest.approx(10, abs=2)
    assert tps.ci_low_pct is not None and tps.ci_low_pct > 2
    assert tps.p_adjusted == pytest.approx(scipy_stats.mannwhitneyu(a, b).pvalue)
    [lat] = adjust_and_decide([compare_samples("p99_ms", a, b, higher_is_better=False)], 2)
    assert lat.verdict == WORSE  # higher latency is worse


def test_noise_is_not_called_a_change() -> None:
    # Tight runs: the interval lies inside the noise band, so no change beyond it is possible.
    a, b = samples(1000, 10, 0.005, 3), samples(1000, 10, 0.005, 4)
    [c] = adjust_and_decide([compare_samples("tps", a, b, higher_is_better=True)], noise_pct=2)
    assert c.verdict == SAME and c.runs_needed is None


def test_runs_that_cannot_tell_say_so_and_how_many_would() -> None:
    # 6 runs a side at 2% CV: the interval reaches past the ±2% band, so "no change" would
    # claim more than the runs show.
    a, b = samples(1000, 6, 0.02, 3), samples(1000, 6, 0.02, 4)
    [c] = adjust_and_decide([compare_samples("tps", a, b, higher_is_better=True)], noise_pct=2)
    assert c.verdict == INCONCLUSIVE
    assert c.runs_needed is not None and c.runs_needed > 6
    assert verdict_words(c).startswith("inconclusive: too few runs to detect a change")


def test_a_significant_change_inside_the_noise_threshold_is_not_called() -> None:
    a, b = samples(1000, 10, 0.001, 5), samples(1010, 10, 0.001, 6)
    [c] = adjust_and_decide([compare_samples("tps", a, b, higher_is_better=True)], noise_pct=2)
    assert c.p_adjusted is not None and c.p_adjusted < 0.05
    assert c.verdict == SAME


def test_holm_across_points_and_too_few_runs() -> None:
    changes = [
        compare_samples("tps", samples(1000, 4, 0.01, 7), samples(1100, 4, 0.01, 8),
                        higher_is_better=True),
        compare_samples("tps", samples(1000, 4, 0.01, 9), samples(1000, 4, 0.01, 10),
                        higher_is_better=True),
        compare_samples("tps", [1000.0], [2000.0], higher_is_better=True),
    ]  # fmt: skip
    decided = adjust_and_decide(changes, noise_pct=2)
    assert decided[0].p_value == pytest.approx(0.0286, abs=1e-4)
    assert decided[0].p_adjusted == pytest.approx(2 * 0.0286, abs=1e-3)  # two tests counted
    # 4 vs 4 cannot survive the correction over two points: no verdict could come of it.
    assert decided[0].verdict == INCONCLUSIVE and (decided[0].runs_needed or 0) >= 5
    assert decided[2].verdict == TOO_FEW


def test_the_fewest_runs_a_test_can_use_grows_with_the_comparisons() -> None:
    # 2 / C(2n, n) x comparisons < 0.05, by hand: C(6,3) = 20, C(8,4) = 70, C(10,5) = 252,
    # C(12,6) = 924
    assert [min_runs_per_side(m) for m in (1, 2, 4, 6, 7, 20)] == [4, 5, 5, 5, 6, 6]
    assert runs_per_side(0.001, 50, comparisons=4) == 5
