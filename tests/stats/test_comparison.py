"""A/B change, interval, p-value and verdict on samples with and without a real difference."""

from __future__ import annotations

import math
import random

import pytest

from dbscale.stats.comparison import (
    BETTER,
    SAME,
    TOO_FEW,
    WORSE,
    adjust_and_decide,
    compare_samples,
    log_ratio_interval,
)

scipy_stats = pytest.importorskip("scipy.stats")


def test_log_ratio_interval_is_welch_on_logs() -> None:
    a = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0]
    b = [1100.0, 1090.0, 1110.0, 1095.0, 1105.0, 1102.0]
    got = log_ratio_interval(a, b)
    assert got is not None
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    ref = scipy_stats.ttest_ind(lb, la, equal_var=False).confidence_interval(0.95)
    assert got[1] == pytest.approx(math.expm1(ref.low), rel=1e-9)
    assert got[2] == pytest.approx(math.expm1(ref.high), rel=1e-9)
    assert log_ratio_interval([1.0], b) is None


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
    a, b = samples(1000, 6, 0.02, 3), samples(1000, 6, 0.02, 4)
    [c] = adjust_and_decide([compare_samples("tps", a, b, higher_is_better=True)], noise_pct=2)
    assert c.verdict == SAME


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
    assert decided[0].verdict == SAME  # 4 vs 4 cannot survive the correction
    assert decided[2].verdict == TOO_FEW
