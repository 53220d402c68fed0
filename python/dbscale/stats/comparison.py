"""A against B for one metric, over per-run values: the relative change as the ratio of geometric
means with its confidence interval (Welch's t on log values), a two-sided Mann-Whitney U p-value,
and a verdict that fires only when the Holm-adjusted p is below alpha *and* the whole interval
lies beyond the noise threshold (criterion's rule). Otherwise: no significant change.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dbscale.stats.distributions import holm, mann_whitney_u, student_t_ppf

ALPHA = 0.05
BETTER, WORSE, SAME, TOO_FEW = "better", "worse", "no significant change", "too few runs"


@dataclass(frozen=True)
class Change:
    metric: str
    higher_is_better: bool
    n_a: int
    n_b: int
    median_a: float | None
    median_b: float | None
    change_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    p_adjusted: float | None = None
    verdict: str = TOO_FEW


def log_ratio_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float] | None:
    """(change, low, high) of B relative to A, as fractions: exp of the difference of log means
    and its Welch t-interval. None unless both sides have 2+ positive values."""
    if len(a) < 2 or len(b) < 2 or min(*a, *b) <= 0:
        return None
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    diff = statistics.fmean(lb) - statistics.fmean(la)
    va, vb = statistics.variance(la) / len(la), statistics.variance(lb) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0.0:
        return math.expm1(diff), math.expm1(diff), math.expm1(diff)
    df = (va + vb) ** 2 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1))
    margin = student_t_ppf((1.0 + confidence) / 2.0, df) * se
    return math.expm1(diff), math.expm1(diff - margin), math.expm1(diff + margin)


def compare_samples(
    metric: str,
    a: Sequence[float],
    b: Sequence[float],
    *,
    higher_is_better: bool,
    confidence: float = 0.95,
) -> Change:
    """The change and p-value; the verdict comes from `decide` once all p-values are known."""
    interval = log_ratio_interval(a, b, confidence)
    p_value = mann_whitney_u(a, b)[1] if a and b else None
    return Change(
        metric=metric,
        higher_is_better=higher_is_better,
        n_a=len(a),
        n_b=len(b),
        median_a=statistics.median(a) if a else None,
        median_b=statistics.median(b) if b else None,
        change_pct=100.0 * interval[0] if interval else None,
        ci_low_pct=100.0 * interval[1] if interval else None,
        ci_high_pct=100.0 * interval[2] if interval else None,
        p_value=p_value,
    )


def decide(change: Change, noise_pct: float, alpha: float = ALPHA) -> str:
    if change.ci_low_pct is None or change.ci_high_pct is None or change.p_adjusted is None:
        return TOO_FEW
    if change.p_adjusted >= alpha:
        return SAME
    if change.ci_low_pct > noise_pct:
        return BETTER if change.higher_is_better else WORSE
    if change.ci_high_pct < -noise_pct:
        return WORSE if change.higher_is_better else BETTER
    return SAME


def adjust_and_decide(
    changes: Sequence[Change], noise_pct: float, alpha: float = ALPHA
) -> list[Change]:
    """Holm's correction across `changes` (one metric over many points), then the verdicts."""
    adjusted = holm([c.p_value if c.ci_low_pct is not None else None for c in changes])
    out = []
    for change, p in zip(changes, adjusted, strict=True):
        change = replace(change, p_adjusted=p)
        out.append(replace(change, verdict=decide(change, noise_pct, alpha)))
    return out
