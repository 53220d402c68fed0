"""Confidence intervals over per-run values (the run is the unit of replication): the median's
distribution-free order-statistic interval, and the mean's Student-t interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from dbscale.stats.distributions import binomial_cdf, student_t_ppf

CONFIDENCE = 0.95


@dataclass(frozen=True)
class ConfidenceInterval:
    low: float
    high: float
    confidence: float
    method: str  # "order-statistic" or "student-t"


def median_order_statistic_ci(
    values: Sequence[float], confidence: float = CONFIDENCE
) -> ConfidenceInterval | None:
    """[x_(j), x_(n+1-j)] for the largest j whose coverage, 1 - 2 P(B <= j-1) with
    B ~ Binomial(n, 1/2), is at least `confidence`. None when even [min, max] falls short
    (n < 6 at 95%)."""
    data = sorted(values)
    n = len(data)
    best: int | None = None
    for j in range(1, n // 2 + 1):
        if 1.0 - 2.0 * binomial_cdf(j - 1, n) >= confidence:
            best = j
        else:
            break
    if best is None:
        return None
    return ConfidenceInterval(data[best - 1], data[n - best], confidence, "order-statistic")


def order_statistic_coverage(n: int, j: int) -> float:
    """The coverage of [x_(j), x_(n+1-j)] for the median."""
    return 1.0 - 2.0 * binomial_cdf(j - 1, n)


def min_runs_for_median_ci(confidence: float = CONFIDENCE) -> int:
    n = 1
    while order_statistic_coverage(n, 1) < confidence:
        n += 1
    return n


def mean_t_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> ConfidenceInterval | None:
    """mean +- t_{(1+c)/2, n-1} s / sqrt(n); None with fewer than 2 values."""
    n = len(values)
    if n < 2:
        return None
    mean = statistics.fmean(values)
    margin = (
        student_t_ppf((1.0 + confidence) / 2.0, n - 1) * statistics.stdev(values) / math.sqrt(n)
    )
    return ConfidenceInterval(mean - margin, mean + margin, confidence, "student-t")


@dataclass(frozen=True)
class Spread:
    """Descriptive figures of per-run values."""

    n: int
    mean: float
    median: float
    stddev: float | None
    cv_pct: float | None
    min: float
    max: float


def spread(values: Sequence[float]) -> Spread | None:
    if not values:
        return None
    mean = statistics.fmean(values)
    stddev = statistics.stdev(values) if len(values) > 1 else None
    cv = 100.0 * stddev / mean if stddev is not None and mean else None
    return Spread(
        n=len(values),
        mean=mean,
        median=statistics.median(values),
        stddev=stddev,
        cv_pct=cv,
        min=min(values),
        max=max(values),
    )
