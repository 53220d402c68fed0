"""Change points in a series of values in time order: E-divisive means (Matteson and James) with
the three changes Apache Otava's published method makes (docs/MATH.md; Fleming et al., "Hunter"):

1. **Candidates.** In a stretch of the series, the split tau (and end kappa) maximising the energy
   divergence Q between series[s:tau] and series[tau:kappa] (alpha = 1: absolute differences)
   is the candidate; the change point is the first value after the change.
2. **A t-test decides**, not a permutation test: Student's two-sample test between the values
   either side of the candidate (deterministic, and usable with a handful of points).
3. **Windows and weak points.** Candidates are sought in overlapping windows (`window` values,
   half a window apart) at a relaxed p (ten times `p_value`), found recursively in each window;
   their union, the "weak" change points, is then thinned from the weakest up: while one's
   p-value (between its neighbouring change points) is not below `p_value`, or the smallest
   relative change is not above `min_magnitude`, it is dropped and its neighbours re-tested.

Written here from the method's description; pure Python (windows of ~50 values need no numpy).
Two details differ from Otava 0.8's code, deliberately: the t-test uses sample standard
deviations (Otava passes population ones, which makes small segments look more significant), and
after a merge drops a point both its neighbours are re-tested (Otava re-tests the point after it
and the next). `otava=True` restores both; with it this reproduces Otava's published tigerbeetle
results exactly (tests/stats/test_change_points.py).
Each change point carries its means and standard deviations before and after (the values
between it and its neighbouring change points), the relative change, a confidence interval of
the change (Student-t, as a % of the mean before) and the p-value.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from dbscale.stats.distributions import student_t_cdf, student_t_ppf

DEFAULT_WINDOW = 50
DEFAULT_P_VALUE = 0.001
WEAK_FACTOR = 10.0  # the split pass runs at 10 x p (2 x above 0.05, as Otava does)


@dataclass(frozen=True)
class SegmentTest:
    """Student's t-test between the values before and after a change point."""

    n_before: int
    n_after: int
    mean_before: float
    mean_after: float
    stddev_before: float
    stddev_after: float
    p_value: float

    @property
    def change_pct(self) -> float | None:
        """mean after / mean before - 1, in %."""
        if self.mean_before == 0:
            return None
        return 100.0 * (self.mean_after / self.mean_before - 1.0)

    @property
    def magnitude(self) -> float:
        """The larger relative change of the two directions (a fraction), as Otava's floor uses."""
        forward = self.mean_after / self.mean_before - 1.0 if self.mean_before else 0.0
        backward = self.mean_before / self.mean_after - 1.0 if self.mean_after else 0.0
        return max(abs(forward), abs(backward))

    def change_interval_pct(self, confidence: float = 0.95) -> tuple[float, float] | None:
        """The difference of means with its pooled Student-t interval, as % of the mean before."""
        dof = self.n_before + self.n_after - 2
        if dof < 1 or self.mean_before == 0:
            return None
        margin = student_t_ppf((1 + confidence) / 2, dof) * _pooled_se(self)
        difference = self.mean_after - self.mean_before
        scale = 100.0 / abs(self.mean_before)
        return (difference - margin) * scale, (difference + margin) * scale


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first value after the change
    divergence: float  # Q at the split that found it
    test: SegmentTest


def _pooled_se(test: SegmentTest) -> float:
    n1, n2 = test.n_before, test.n_after
    dof = n1 + n2 - 2
    if dof < 1:
        return math.inf
    pooled = ((n1 - 1) * test.stddev_before**2 + (n2 - 1) * test.stddev_after**2) / dof
    return math.sqrt(pooled * (1 / n1 + 1 / n2))


def t_test(before: Sequence[float], after: Sequence[float], otava: bool = False) -> SegmentTest:
    """Student's two-sided two-sample t-test with pooled variance; one value a side has no
    spread of its own (the other side's spread is used alone). p = 1 with two values in all.
    `otava`: population standard deviations, as Otava 0.8 computes them."""
    n1, n2 = len(before), len(after)
    m1, m2 = statistics.fmean(before), statistics.fmean(after)
    deviation = statistics.pstdev if otava else statistics.stdev
    s1 = deviation(before) if n1 > 1 else 0.0
    s2 = deviation(after) if n2 > 1 else 0.0
    test = SegmentTest(n1, n2, m1, m2, s1, s2, 1.0)
    if n1 + n2 <= 2:
        return test
    se = _pooled_se(test)
    if se == 0:
        p = 1.0 if m1 == m2 else 0.0
    else:
        t = abs(m2 - m1) / se
        p = 2.0 * (1.0 - student_t_cdf(t, n1 + n2 - 2))
    return SegmentTest(n1, n2, m1, m2, s1, s2, min(1.0, max(0.0, p)))


class _Divergence:
    """Q(tau, kappa) over one window's values, from 2-D prefix sums of |x_i - x_j| (each Q in
    O(1), a stretch's best split in O(m^2))."""

    def __init__(self, values: Sequence[float]) -> None:
        n = len(values)
        self.prefix = [[0.0] * (n + 1) for _ in range(n + 1)]
        for i in range(n):
            row, above, below = values[i], self.prefix[i], self.prefix[i + 1]
            running = 0.0
            for j in range(n):
                running += abs(row - values[j])
                below[j + 1] = above[j + 1] + running

    def _block(self, r0: int, r1: int, c0: int, c1: int) -> float:
        p = self.prefix
        return p[r1][c1] - p[r0][c1] - p[r1][c0] + p[r0][c0]

    def q(self, start: int, tau: int, kappa: int) -> float:
        n, m = tau - start, kappa - tau
        between = self._block(start, tau, tau, kappa)
        within_x = self._block(start, tau, start, tau) / 2.0
        within_y = self._block(tau, kappa, tau, kappa) / 2.0
        value = 2.0 / (n + m) * between
        if n > 1:
            value -= 2.0 * m / ((n + m) * (n - 1)) * within_x
        if m > 1:
            value -= 2.0 * n / ((n + m) * (m - 1)) * within_y
        return value

    def best_split(self, start: int, end: int) -> tuple[int, float]:
        """(tau, Q) maximising Q(start, tau, kappa) over start < tau < kappa <= end (the first
        maximum in tau, then kappa, order)."""
        best_tau, best_q = start + 1, -math.inf
        for tau in range(start + 1, end):
            for kappa in range(tau + 1, end + 1):
                value = self.q(start, tau, kappa)
                if value > best_q:
                    best_tau, best_q = tau, value
        return best_tau, best_q


def _stretches(points: Sequence[int], length: int) -> list[tuple[int, int]]:
    bounds = [0, *points, length]
    return [(a, b) for a, b in itertools.pairwise(bounds) if a < b]


def _window_change_points(
    values: Sequence[float], p_value: float, otava: bool
) -> list[tuple[int, float]]:
    """E-divisive in one window: the best candidate over every stretch between the points found
    so far, kept while its t-test (within its stretch) is significant."""
    divergence = _Divergence(values)
    best: dict[tuple[int, int], tuple[int, float]] = {}  # a stretch's split, found once
    found: list[tuple[int, float]] = []
    while True:
        stretches = [s for s in _stretches([i for i, _ in found], len(values)) if s[1] - s[0] > 1]
        for a, b in stretches:
            if (a, b) not in best:
                best[(a, b)] = divergence.best_split(a, b)
        candidates = [(*best[(a, b)], a, b) for a, b in stretches]
        if not candidates:
            return found
        tau, q, a, b = max(candidates, key=lambda c: c[1])
        if t_test(values[a:tau], values[tau:b], otava).p_value > p_value:
            return found
        found = sorted([*found, (tau, q)])


def _tested(
    values: Sequence[float], indexes: Sequence[int], k: int, q: float, otava: bool
) -> ChangePoint:
    """Point `k` of the sorted `indexes`, tested between its neighbouring points."""
    index = indexes[k]
    before = indexes[k - 1] if k > 0 else 0
    after = indexes[k + 1] if k + 1 < len(indexes) else len(values)
    return ChangePoint(index, q, t_test(values[before:index], values[index:after], otava))


def weak_change_points(
    values: Sequence[float], window: int, p_value: float, otava: bool = False
) -> list[ChangePoint]:
    """The split pass: each window's change points at `p_value`, windows half a window apart
    (the next starting at the last point found when that is further on), their union tested
    between neighbours."""
    if window < 2:
        raise ValueError("the window must hold at least 2 values")
    step = window // 2
    found: dict[int, float] = {}
    start = 0
    while start < len(values):
        end = min(start + window, len(values))
        points = _window_change_points(values[start:end], p_value, otava)
        for index, q in points:
            found.setdefault(index + start, q)
        last = points[-1][0] + start if points else 0
        start = max(last, start + step)
    indexes = sorted(found)
    return [_tested(values, indexes, k, found[i], otava) for k, i in enumerate(indexes)]


def merge(
    values: Sequence[float],
    points: list[ChangePoint],
    p_value: float,
    min_magnitude: float,
    otava: bool = False,
) -> list[ChangePoint]:
    """The merge pass: drop the weakest point (the largest p-value not below `p_value`, else the
    smallest change not above `min_magnitude`) and re-test its neighbours, until every point is
    significant and large enough."""
    points = list(points)
    while points:
        weakest = max(range(len(points)), key=lambda k: points[k].test.p_value)
        if points[weakest].test.p_value < p_value:
            weakest = min(range(len(points)), key=lambda k: points[k].test.magnitude)
            if points[weakest].test.magnitude > min_magnitude:
                return points
        del points[weakest]
        indexes = [p.index for p in points]
        neighbours = (weakest, weakest + 1) if otava else (weakest - 1, weakest)
        for k in neighbours:
            if 0 <= k < len(points):
                points[k] = _tested(values, indexes, k, points[k].divergence, otava)
    return points


def change_points(
    values: Sequence[float],
    *,
    window: int = DEFAULT_WINDOW,
    p_value: float = DEFAULT_P_VALUE,
    min_magnitude: float = 0.0,
    otava: bool = False,
) -> list[ChangePoint]:
    """The change points of `values` (in time order): weak points at a relaxed p, merged at
    `p_value` and `min_magnitude` (a fraction: 0.05 keeps changes of 5% or more)."""
    if not 0 < p_value < 1:
        raise ValueError("the p-value must be between 0 and 1")
    if len(values) < 2:
        return []
    # The split pass's relaxed p: 10 x p below 0.05, 2 x p below 0.5, else p itself.
    weak_p = p_value * (WEAK_FACTOR if p_value < 0.05 else 2 if p_value < 0.5 else 1)
    weak = weak_change_points(values, window, weak_p, otava)
    return merge(values, weak, p_value, min_magnitude, otava)
