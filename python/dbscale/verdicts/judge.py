"""Thresholds judged per point with the point's interval (the median of its measured runs and the
median's 95% interval, as history's points have them):

- *pass*: the whole interval is on the right side of the limit;
- *fail*: the whole interval is on the wrong side;
- *inconclusive*: the interval straddles the limit (`strict` counts it as a failure).

With one run there is no interval: its value is judged as it is, and the verdict says so. A
point with no value for the metric (every run failed, or the metric does not apply: tpmC of a
TPC-B run) fails: the objective was not shown to hold.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dbscale.history.rows import point_figures
from dbscale.results.measurements import Measurement, collect_measurements
from dbscale.values import format_value
from dbscale.verdicts.baseline import Baseline, load_baseline
from dbscale.verdicts.expression import Threshold
from dbscale.verdicts.thresholds_file import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    ThresholdsFile,
    ThresholdVerdict,
)


@dataclass(frozen=True)
class ThresholdSet:
    """The thresholds of a study as resolved: what, against which baseline, how strictly."""

    thresholds: tuple[Threshold, ...]
    baseline: str | None = None
    strict: bool = False

    def metric_names(self) -> list[str]:
        return sorted({t.metric.name for t in self.thresholds})


def _number(value: float) -> str:
    return format_value(round(value, 4)) if abs(value) < 100 else f"{value:,.0f}"


def _verdict(
    threshold: Threshold, limit: float, values: Sequence[float]
) -> tuple[str, str, tuple[float, float | None, float | None]]:
    value, low, high = point_figures(values)
    n = len(values)
    if n == 1 or low is None or high is None:
        ok = threshold.holds(value, limit)
        words = f"{_number(value)} (one run, no interval)" if n == 1 else f"{_number(value)}"
        return (PASS if ok else FAIL), words, (value, None, None)
    worst, best = (high, low) if threshold.upper else (low, high)
    inside, outside = threshold.holds(worst, limit), not threshold.holds(best, limit)
    words = f"{_number(value)} [{_number(low)}, {_number(high)}] over {n} runs"
    verdict = PASS if inside else FAIL if outside else INCONCLUSIVE
    return verdict, words, (value, low, high)


def point_words(point_key: str, facts: Mapping[str, str]) -> str:
    """`clients=4 @ main`: the point's key (the workload for a study of one point) and target,
    from its runs' facts (what was run, where)."""
    words = point_key if point_key not in ("", "default") else facts.get("workload", point_key)
    target = facts.get("target")
    return f"{words} @ {target}" if target and "target=" not in words else words


def judge_point(
    threshold: Threshold, items: Sequence[Measurement], baseline: Baseline | None
) -> ThresholdVerdict:
    """One threshold at one point from the point's measurements of its metric."""
    first = items[0]
    where = point_words(first.point_key, {**first.what, **first.where})
    base_value = None
    limit = threshold.limit
    if threshold.needs_baseline:
        base_value = (baseline.value(threshold.metric.name, first.series_key, first.point_key)
                      if baseline is not None else None)  # fmt: skip
        limit = None if base_value is None else (threshold.factor or 1.0) * base_value
    common = {"threshold": threshold.text, "metric": threshold.metric.name,
              "unit": threshold.metric.unit, "point_key": first.point_key, "point": where,
              "baseline": base_value, "runs": len(items)}  # fmt: skip
    if limit is None:
        why = ("the baseline has no value for this point" if baseline is not None
               else "no baseline given (thresholds.baseline or --baseline)")  # fmt: skip
        return ThresholdVerdict(**common, verdict=FAIL, limit=None, why=why)
    verdict, words, (value, low, high) = _verdict(threshold, limit, [m.value for m in items])
    bound = f"{threshold.op} {_number(limit)}"
    if base_value is not None:
        bound += f" ({threshold.factor:g} x baseline {_number(base_value)})"
    return ThresholdVerdict(**common, verdict=verdict, limit=limit, value=value, low=low,
                            high=high, why=f"{words} against {bound}")  # fmt: skip


def wanted_baseline(wanted: ThresholdSet) -> Baseline | None:
    """The baseline's values of the metrics thresholds relative to it are on (None: none is)."""
    relative = sorted({t.metric.name for t in wanted.thresholds if t.needs_baseline})
    if wanted.baseline is None or not relative:
        return None
    return load_baseline(wanted.baseline, relative)


def judge(
    directory: Path,
    wanted: ThresholdSet,
    *,
    aborted: str | None = None,
    baseline: Baseline | None = None,
) -> ThresholdsFile:
    """Every threshold at every point of the study in `directory` (`baseline`: loaded already,
    else read here)."""
    found = collect_measurements(directory, wanted.metric_names())
    baseline = baseline if baseline is not None else wanted_baseline(wanted)
    by_point: dict[tuple[str, str], list[Measurement]] = defaultdict(list)
    for m in found.items:
        by_point[(m.point_key, m.metric)].append(m)
    # A point whose every run was left out (failed, cancelled) is still a point to judge.
    facts = {m.point_key: {**m.what, **m.where} for m in found.items}
    for left in found.left_out:
        if left.reason != "warm-up":
            facts.setdefault(left.point_key, dict(left.facts))
    verdicts = []
    for threshold in wanted.thresholds:
        for point_key in sorted(facts):
            items = by_point.get((point_key, threshold.metric.name), [])
            if items:
                verdicts.append(judge_point(threshold, items, baseline))
                continue
            verdicts.append(ThresholdVerdict(
                threshold=threshold.text, metric=threshold.metric.name,
                unit=threshold.metric.unit, point_key=point_key,
                point=point_words(point_key, facts[point_key]), verdict=FAIL,
                limit=threshold.limit,
                why=f"no measured run has a value of {threshold.metric.name}",
            ))  # fmt: skip
    return ThresholdsFile(strict=wanted.strict, baseline=wanted.baseline, aborted=aborted,
                          verdicts=verdicts)  # fmt: skip
