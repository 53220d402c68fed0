"""The newest ingest against the stretch since the last change: the test CI's `--fail-on
regression` leans on. Change points over the points' values need several points after a change
to be sure of it; with one point after it, a drop of any size is found or missed by the noise of
the points before. This test uses the runs themselves instead:

- the newest point's runs against the runs of every point since the last change point found
  before it (at most `window` points, and the last STRETCH_POINTS: a baseline of 20 ingests is
  precise enough, and nearer the newest than a longer one); the comparison `dbscale compare`
  makes (Mann-Whitney over the runs, the ratio of medians with its bootstrap interval, Holm
  across the series of one metric, a verdict only when the whole interval lies beyond the noise
  band);
- when the newest point has a single run, a prediction test: how far that run lies from the
  stretch's runs, in units of their spread (Student's t with n - 1 degrees of freedom), with its
  prediction interval; significant at 5% and the change itself beyond the noise band (an interval
  holding the run's own noise is rarely wholly beyond it); it needs 3 runs in the stretch.

A regression is the verdict *worse* with a change of at least `--min-change`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dbscale.history.series import Series, SeriesPoint
from dbscale.stats.comparison import (
    ALPHA,
    BETTER,
    INCONCLUSIVE,
    WORSE,
    Change,
    adjust_and_decide,
    compare_samples,
)
from dbscale.stats.distributions import student_t_cdf, student_t_ppf

STRETCH_POINTS = 20
MIN_STRETCH_RUNS = 3  # a single newest run needs this many before it to estimate their spread
TESTED = "newest against the stretch since the last change"


@dataclass(frozen=True)
class NewestTest:
    """One series' newest point against the runs since its last change."""

    series: Series
    first: int  # the stretch's first point
    change: Change

    @property
    def point(self) -> SeriesPoint:
        return self.series.points[-1]

    @property
    def stretch_words(self) -> str:
        points = len(self.series.points) - 1 - self.first
        return f"{self.change.n_b} run(s) against {self.change.n_a} in the {points} point(s) before"


def _prediction(metric: str, before: Sequence[float], run: float, higher: bool) -> Change:
    """A single run against `before`: t = (run - mean) / (sd * sqrt(1 + 1/n))."""
    n, mean = len(before), statistics.fmean(before)
    spread = statistics.stdev(before) * math.sqrt(1.0 + 1.0 / n)
    df = n - 1
    if spread == 0:
        p = 1.0 if run == mean else 0.0
    else:
        p = 2.0 * (1.0 - student_t_cdf(abs(run - mean) / spread, df))
    reach = student_t_ppf(1.0 - ALPHA / 2.0, df) * spread
    return Change(
        metric=metric, higher_is_better=higher, n_a=n, n_b=1, median_a=mean, median_b=run,
        change_pct=100.0 * (run / mean - 1.0), ci_low_pct=100.0 * ((run - reach) / mean - 1.0),
        ci_high_pct=100.0 * ((run + reach) / mean - 1.0), p_value=max(0.0, min(1.0, p)),
        estimate="the run against the stretch's mean, Student's t prediction interval",
    )  # fmt: skip


def _decide_single(change: Change, noise_pct: float) -> str:
    """A single run: significant, and the change itself beyond the noise band (its prediction
    interval, which holds the run's own noise, is rarely wholly beyond it)."""
    p, pct = change.p_value, change.change_pct or 0.0
    if p is None or p >= ALPHA or abs(pct) <= noise_pct:
        return INCONCLUSIVE
    worse = pct < 0 if change.higher_is_better else pct > 0
    return WORSE if worse else BETTER


def stretch_start(series: Series, change_indices: Sequence[int], window: int) -> int:
    """The first point of the stretch the newest point is tested against: the last change point
    before the newest point, no further back than `window` (nor STRETCH_POINTS) points."""
    last = len(series.points) - 1
    earlier = [i for i in change_indices if i < last]
    return max(max(earlier, default=0), last - min(window, STRETCH_POINTS), 0)


def _test(series: Series, first: int) -> Change | None:
    stretch = series.points[first:-1]
    before = [v for p in stretch for v in p.runs]
    after = list(series.points[-1].runs)
    if not before or not after or min(*before, *after) <= 0:
        return None
    if len(after) >= 2 and len(before) >= 2:
        return compare_samples(series.metric, before, after,
                               higher_is_better=series.higher_is_better)  # fmt: skip
    if len(after) == 1 and len(before) >= MIN_STRETCH_RUNS:
        return _prediction(series.metric, before, after[0], series.higher_is_better)
    return None


def newest_tests(
    series_list: Sequence[Series],
    change_indices: dict[tuple[str, str], list[int]],
    *,
    window: int,
    noise_pct: float,
    newest: str,
) -> dict[tuple[str, str], NewestTest]:
    """Each series whose last point is from the newest ingest, tested; Holm across the series of
    one metric (the comparisons of runs; a prediction test is decided on its own p)."""
    tested: list[tuple[Series, int, Change]] = []
    for series in series_list:
        if len(series.points) < 2 or series.points[-1].ingest_id != newest:
            continue
        first = stretch_start(
            series, change_indices.get((series.series_key, series.metric), []), window
        )
        change = _test(series, first)
        if change is not None:
            tested.append((series, first, change))
    out: dict[tuple[str, str], NewestTest] = {}
    for metric in sorted({s.metric for s, _, _ in tested}):
        group = [t for t in tested if t[0].metric == metric]
        paired = [t for t in group if t[2].n_b >= 2]
        decided = dict(zip((id(t) for t in paired),
                           adjust_and_decide([t[2] for t in paired], noise_pct),
                           strict=True))  # fmt: skip
        for item in group:
            series, first, change = item
            if id(item) in decided:
                change = decided[id(item)]
            else:
                change = replace(
                    change, p_adjusted=change.p_value, verdict=_decide_single(change, noise_pct)
                )
            out[(series.series_key, metric)] = NewestTest(series, first, change)
    return out


def decided(test: NewestTest, min_change_pct: float) -> str | None:
    """WORSE or BETTER when the test says so by at least `min_change_pct`; None otherwise."""
    change = test.change
    if change.verdict in (WORSE, BETTER) and abs(change.change_pct or 0.0) >= min_change_pct:
        return change.verdict
    return None
