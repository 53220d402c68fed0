"""Steady state of one run's per-second throughput, by MSER-5: batch the series into means of 5,
pick the truncation d minimizing sum_{i>d} (Z_i - mean_d)^2 / (k - d)^2 over the first half of the
run (the statistic is unreliable with few batches left). A minimum at the end of that half while
the second half still trends (OLS slope of its batch means, |t| > 2) means the run never settled
(White 1997; Hoad & Robinson's review found MSER-5 the one robust automatic rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BATCH = 5
MIN_BATCHES = 4  # below 20 samples the rule says nothing useful


@dataclass(frozen=True)
class SteadyState:
    """`status`: steady (cut-off at the start), settled (a transient in the first half, then
    steady), none (the cut-off is in the second half), or short (too few samples to tell)."""

    status: str
    cutoff_s: float | None

    @property
    def reached(self) -> bool:
        return self.status != "none"


TREND_T = 2.0


def _batches(series: Sequence[float]) -> list[float]:
    return [sum(series[i * BATCH : (i + 1) * BATCH]) / BATCH for i in range(len(series) // BATCH)]


def mser5_cutoff(series: Sequence[float]) -> int | None:
    """The MSER-5 truncation point in samples, or None for a series under 20 samples."""
    batches = _batches(series)
    k = len(batches)
    if k < MIN_BATCHES:
        return None
    best_d, best = 0, float("inf")
    for d in range(k // 2 + 1):
        tail = batches[d:]
        mean = sum(tail) / len(tail)
        stat = sum((z - mean) ** 2 for z in tail) / len(tail) ** 2
        if stat < best:
            best_d, best = d, stat
    return best_d * BATCH


def _trend_t(values: Sequence[float]) -> float:
    """t statistic of the OLS slope of `values` against their index."""
    n = len(values)
    if n < 3:
        return 0.0
    xs = range(n)
    mx, my = (n - 1) / 2.0, sum(values) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, values, strict=True)) / sxx
    residual = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, values, strict=True))
    if residual == 0.0:
        return 0.0 if slope == 0.0 else float("inf")
    return float(abs(slope) / ((residual / (n - 2)) / sxx) ** 0.5)


def steady_state(tps_per_interval: Sequence[float], interval_s: float = 1.0) -> SteadyState:
    cutoff = mser5_cutoff(tps_per_interval)
    if cutoff is None:
        return SteadyState("short", None)
    cutoff_s = cutoff * interval_s
    batches = _batches(tps_per_interval)
    at_limit = cutoff // BATCH == len(batches) // 2
    if at_limit and _trend_t(batches[len(batches) // 2 :]) > TREND_T:
        return SteadyState("none", cutoff_s)
    return SteadyState("steady" if cutoff == 0 else "settled", cutoff_s)
