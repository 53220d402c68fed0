"""The pure-Python statistics against scipy's reference values (scipy is a dev dependency only)."""

from __future__ import annotations

import random

import pytest

from dbscale.stats.confidence import (
    mean_t_ci,
    median_order_statistic_ci,
    min_runs_for_median_ci,
    order_statistic_coverage,
    spread,
)
from dbscale.stats.distributions import holm, mann_whitney_u, student_t_cdf, student_t_ppf

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 29, 120, 7.3])
def test_student_t_against_scipy(df: float) -> None:
    for p in (0.9, 0.95, 0.975, 0.995, 0.025):
        assert student_t_ppf(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-9)
    for t in (-3.0, -0.5, 0.0, 1.2, 4.0):
        assert student_t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), abs=1e-12)


def test_t_interval_against_scipy() -> None:
    values = [1012.5, 998.1, 1003.3, 1021.9, 987.0]
    ci = mean_t_ci(values)
    assert ci is not None
    low, high = scipy_stats.t.interval(
        0.95, len(values) - 1, loc=sum(values) / 5, scale=scipy_stats.sem(values)
    )
    assert (ci.low, ci.high) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert mean_t_ci([5.0]) is None


def test_mann_whitney_against_scipy() -> None:
    rng = random.Random(4)
    for _ in range(300):
        a = [round(rng.gauss(100, 5), rng.choice([0, 3])) for _ in range(rng.randint(1, 12))]
        b = [round(rng.gauss(rng.choice([100, 106]), 5), 3) for _ in range(rng.randint(1, 12))]
        u, p = mann_whitney_u(a, b)
        ref = scipy_stats.mannwhitneyu(a, b)
        assert u == pytest.approx(ref.statistic)
        assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
    # the smallest possible p-values the research report quotes
    assert mann_whitney_u([1, 2, 3, 4], [5, 6, 7, 8])[1] == pytest.approx(0.0286, abs=1e-4)
    assert mann_whitney_u(list(range(5)), list(range(5, 10)))[1] == pytest.approx(0.0079, abs=1e-4)


def test_order_statistic_ci_against_the_binomial() -> None:
    assert min_runs_for_median_ci() == 6
    for n in range(1, 6):
        assert median_order_statistic_ci(list(range(n))) is None
    for n in range(6, 40):
        data = [float(i) for i in range(n)]
        ci = median_order_statistic_ci(data)
        assert ci is not None
        j = int(ci.low) + 1  # x_(j) with 1-based j
        assert ci.high == data[n - j]
        coverage = 1 - 2 * scipy_stats.binom.cdf(j - 1, n, 0.5)
        assert order_statistic_coverage(n, j) == pytest.approx(coverage, rel=1e-12)
        assert coverage >= 0.95
        assert 1 - 2 * scipy_stats.binom.cdf(j, n, 0.5) < 0.95  # the narrowest that covers


def test_holm_against_hand_values() -> None:
    assert holm([0.01, 0.04, 0.03, None]) == [
        pytest.approx(0.03), pytest.approx(0.06), pytest.approx(0.06), None,
    ]  # fmt: skip


def test_spread() -> None:
    described = spread([10.0, 12.0, 14.0])
    assert described is not None
    assert described.cv_pct == pytest.approx(100 * 2 / 12)
    assert (described.min, described.max, described.median) == (10.0, 14.0, 12.0)
