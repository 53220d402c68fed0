"""`dbscale history detect`: where each series changed. With `MIN_POINTS` points or more, change
points over the points' values (stats/change_points.py: E-divisive means with a t-test, Otava's
method); with fewer, the A/B comparison `dbscale compare` makes (Mann-Whitney over the runs,
Holm across the series of a metric, the change's bootstrap interval against the noise band) of
the newest point against the one before, and the result says so.

A change is a regression when the metric got worse (throughput down, latency or cost up). CI
uses `--fail-on regression`: it fails when a regression is in the newest ingest, i.e. the change
point is at a point that ingest added, or the A/B of that point against the one before says
worse, or the newest point's runs against the runs since the last change say worse
(history/newest.py: one point after a change is too few for change points to be sure of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dbscale.history.newest import TESTED, NewestTest, decided, newest_tests
from dbscale.history.series import Series, SeriesPoint
from dbscale.stats.change_points import DEFAULT_P_VALUE, DEFAULT_WINDOW, change_points
from dbscale.stats.comparison import (
    BETTER,
    DEFAULT_NOISE_PCT,
    WORSE,
    Change,
    adjust_and_decide,
    compare_samples,
    verdict_words,
)

MIN_POINTS = 6  # fewer: the A/B comparison of the last two points (Otava warns below this)
CHANGE_POINTS, A_B = "change points", "A/B of the last two points"
REGRESSION, IMPROVEMENT = "regression", "improvement"


@dataclass(frozen=True)
class DetectSettings:
    window: int = DEFAULT_WINDOW
    p_value: float = DEFAULT_P_VALUE
    min_magnitude_pct: float = 0.0
    noise_pct: float = DEFAULT_NOISE_PCT  # the A/B fallback's noise band


@dataclass(frozen=True)
class Finding:
    """A change: at `index`, the first point after it."""

    index: int
    point: SeriesPoint
    before: float  # the mean of the points (or the median of the runs) before
    after: float
    change_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    direction: str  # regression | improvement
    in_newest: bool  # the point is from the newest ingest in the store
    method: str = ""  # the test that found it: CHANGE_POINTS, A_B or TESTED


@dataclass(frozen=True)
class SeriesChanges:
    series: Series
    method: str
    findings: list[Finding] = field(default_factory=list)
    note: str = ""

    @property
    def regressions_in_newest(self) -> list[Finding]:
        return [f for f in self.findings if f.direction == REGRESSION and f.in_newest]


def _direction(series: Series, change_pct: float | None) -> str:
    worse = (change_pct or 0.0) < 0 if series.higher_is_better else (change_pct or 0.0) > 0
    return REGRESSION if worse else IMPROVEMENT


def _change_points(series: Series, settings: DetectSettings, newest: str) -> SeriesChanges:
    values = [p.value for p in series.points]
    found = change_points(
        values, window=settings.window, p_value=settings.p_value,
        min_magnitude=settings.min_magnitude_pct / 100.0,
    )  # fmt: skip
    findings = []
    for cp in found:
        test, point = cp.test, series.points[cp.index]
        interval = test.change_interval_pct()
        findings.append(Finding(
            index=cp.index, point=point, before=test.mean_before, after=test.mean_after,
            change_pct=test.change_pct, ci_low_pct=interval[0] if interval else None,
            ci_high_pct=interval[1] if interval else None, p_value=test.p_value,
            direction=_direction(series, test.change_pct), in_newest=point.ingest_id == newest,
            method=CHANGE_POINTS,
        ))  # fmt: skip
    return SeriesChanges(series, CHANGE_POINTS, findings)


def _a_b(
    series_list: Sequence[Series], settings: DetectSettings, newest: str
) -> list[SeriesChanges]:
    """The last point against the one before, for each short series of one metric (Holm across
    them, as `compare` does across points)."""
    pairs = [s for s in series_list if len(s.points) >= 2]
    changes = [
        compare_samples(s.metric, s.points[-2].runs, s.points[-1].runs,
                        higher_is_better=s.higher_is_better)
        for s in pairs
    ]  # fmt: skip
    verdicts = adjust_and_decide(changes, settings.noise_pct)
    decided = dict(zip((s.series_key for s in pairs), verdicts, strict=True))
    out = []
    for series in series_list:
        if len(series.points) < 2:
            out.append(SeriesChanges(series, A_B, note="one point: nothing to compare yet"))
            continue
        change: Change = decided[series.series_key]
        note = (f"{len(series.points)} points (change points need {MIN_POINTS}): the last "
                f"against the one before: {verdict_words(change)}")  # fmt: skip
        findings = []
        if change.verdict in (BETTER, WORSE):
            point = series.points[-1]
            findings.append(Finding(
                index=len(series.points) - 1, point=point, before=change.median_a or 0.0,
                after=change.median_b or 0.0, change_pct=change.change_pct,
                ci_low_pct=change.ci_low_pct, ci_high_pct=change.ci_high_pct,
                p_value=change.p_adjusted,
                direction=REGRESSION if change.verdict == WORSE else IMPROVEMENT,
                in_newest=point.ingest_id == newest, method=A_B,
            ))  # fmt: skip
        out.append(SeriesChanges(series, A_B, findings, note))
    return out


def _newest_finding(test: NewestTest, direction: str) -> Finding:
    change = test.change
    return Finding(
        index=len(test.series.points) - 1, point=test.point, before=change.median_a or 0.0,
        after=change.median_b or 0.0, change_pct=change.change_pct,
        ci_low_pct=change.ci_low_pct, ci_high_pct=change.ci_high_pct,
        p_value=change.p_adjusted, direction=direction, in_newest=True, method=TESTED,
    )  # fmt: skip


def _with_newest(
    result: SeriesChanges, test: NewestTest | None, min_change: float
) -> SeriesChanges:
    """The newest test's finding added when no other test found that change at the newest point."""
    if test is None:
        return result
    verdict = decided(test, min_change)
    direction = None if verdict is None else REGRESSION if verdict == WORSE else IMPROVEMENT
    last = len(result.series.points) - 1
    if direction is None or any(f.index == last and f.direction == direction
                                for f in result.findings):  # fmt: skip
        return result
    note = f"{result.note}; " if result.note else ""
    note += f"the newest point: {test.stretch_words}"
    findings = [*result.findings, _newest_finding(test, direction)]
    return SeriesChanges(result.series, result.method, findings, note)


def detect(
    series_list: Sequence[Series], settings: DetectSettings, newest: str
) -> list[SeriesChanges]:
    """Each series' changes, in the order given; `newest` is the newest ingest's id."""
    long = [s for s in series_list if len(s.points) >= MIN_POINTS]
    short = [s for s in series_list if len(s.points) < MIN_POINTS]
    found = {id(s): _change_points(s, settings, newest) for s in long}
    for metric in sorted({s.metric for s in short}):
        group = [s for s in short if s.metric == metric]
        for series, result in zip(group, _a_b(group, settings, newest), strict=True):
            found[id(series)] = result
    indices = {(s.series_key, s.metric): [f.index for f in found[id(s)].findings
                                          if found[id(s)].method == CHANGE_POINTS]
               for s in series_list}  # fmt: skip
    tests = newest_tests(series_list, indices, window=settings.window,
                         noise_pct=settings.noise_pct, newest=newest)  # fmt: skip
    return [
        _with_newest(found[id(s)], tests.get((s.series_key, s.metric)), settings.min_magnitude_pct)
        for s in series_list
    ]
