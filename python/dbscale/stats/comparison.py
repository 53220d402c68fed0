"""A against B for one metric, over per-run values: the relative change as the ratio of the
medians (B's median over A's, so it agrees with the medians printed beside it) with a percentile
bootstrap interval, a two-sided Mann-Whitney U p-value, and a verdict:

- *better* or *worse*: the Holm-adjusted p is below alpha *and* the whole interval lies beyond
  the noise threshold (criterion's rule);
- *no significant change*: not that, and the data could have shown a change: the interval lies
  within the noise band, so no change beyond the noise is compatible with the runs;
- *inconclusive*: not significant, but the interval still reaches past the noise band (or the
  runs are too few for the test to reach alpha at all, with Holm over this many points): the
  runs cannot tell a change from none, and `runs_needed` says how many per side would.

Power: the smallest change the runs could have detected at 80% power, and the runs per side a
given change needs, from the run-to-run spread of log values (pooled over both sides) with the
normal approximation, divided by Mann-Whitney's asymptotic efficiency (3/pi against the t test);
never fewer than 4 runs per side, the least for which the test can reach p < 0.05.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dbscale.stats.distributions import holm, mann_whitney_u

ALPHA = 0.05
DEFAULT_NOISE_PCT = 2.0  # a plan's statistics.noise_threshold_pct when it gives none
POWER = 0.8
ESTIMATE = "ratio of medians, percentile bootstrap interval"
BOOTSTRAP_RESAMPLES = 4000
MANN_WHITNEY_EFFICIENCY = 3 / math.pi
BETTER, WORSE, SAME, TOO_FEW = "better", "worse", "no significant change", "too few runs"
INCONCLUSIVE = "inconclusive"


def min_runs_per_side(comparisons: int = 1, alpha: float = ALPHA) -> int:
    """The fewest runs a side (equal sides) with which Mann-Whitney can reach significance at
    all: its smallest two-sided p, 2 / C(2n, n), times Holm's factor for `comparisons` tests,
    under alpha. 4 for one comparison (3 + 3 runs cannot go below p = 0.1), 5 for two to six."""
    n = 2
    while comparisons * 2 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


MIN_RUNS_PER_SIDE = min_runs_per_side()


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
    estimate: str = ESTIMATE
    detectable_pct: float | None = None  # the smallest change these runs detect at 80% power
    detect_pct: float | None = None  # a change the user asked about (--detect) ...
    runs_to_detect: int | None = None  # ... and the runs per side it needs
    spread: float | None = None  # the pooled spread of log values (for `runs_needed`)
    runs_needed: int | None = None  # inconclusive: the runs per side that would decide


def median_ratio_interval(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[float, float, float] | None:
    """(change, low, high) of B relative to A as fractions: median(B) / median(A) - 1 and its
    percentile bootstrap interval (each side resampled on its own; seeded from the values, so
    the same runs give the same interval). None unless both sides have 2+ positive values."""
    if len(a) < 2 or len(b) < 2 or min(*a, *b) <= 0:
        return None
    a, b = sorted(a), sorted(b)  # the order runs were recorded in does not matter
    change = statistics.median(b) / statistics.median(a) - 1.0
    rng = random.Random(repr((a, b)))
    ratios = sorted(
        statistics.median(rng.choices(b, k=len(b))) / statistics.median(rng.choices(a, k=len(a)))
        for _ in range(resamples)
    )
    tail = (1.0 - confidence) / 2.0
    low = ratios[math.floor(tail * (resamples - 1))]
    high = ratios[math.ceil((1.0 - tail) * (resamples - 1))]
    return change, low - 1.0, high - 1.0


def log_spread(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The pooled standard deviation of log values, each side about its own mean."""
    sides = [[math.log(v) for v in side] for side in (a, b) if len(side) >= 2]
    if len(sides) < 2 or any(v <= 0 for side in (a, b) for v in side):
        return None
    dof = sum(len(side) - 1 for side in sides)
    squares = sum(statistics.variance(side) * (len(side) - 1) for side in sides)
    return math.sqrt(squares / dof)


def _z_sum(alpha: float, power: float) -> float:
    normal = statistics.NormalDist()
    return normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)


def detectable_change_pct(
    spread: float, n_a: int, n_b: int, alpha: float = ALPHA, power: float = POWER
) -> float | None:
    """The smallest change (in %) that n_a + n_b runs with this log spread detect at `power`."""
    if min(n_a, n_b) < MIN_RUNS_PER_SIDE:
        return None
    shift = _z_sum(alpha, power) * spread * math.sqrt((1 / n_a + 1 / n_b) / MANN_WHITNEY_EFFICIENCY)
    return 100.0 * math.expm1(shift)


def runs_per_side(
    spread: float,
    change_pct: float,
    alpha: float = ALPHA,
    power: float = POWER,
    comparisons: int = 1,
) -> int:
    """Runs per side that detect a change of `change_pct` (either way) at `power`, and never
    fewer than a test over `comparisons` comparisons can use."""
    shift = abs(math.log1p(change_pct / 100.0))
    if shift == 0:
        raise ValueError("a change of 0% cannot be detected")
    n = 2 * (_z_sum(alpha, power) * spread / shift) ** 2 / MANN_WHITNEY_EFFICIENCY
    return max(min_runs_per_side(comparisons, alpha), math.ceil(n))


def compare_samples(
    metric: str,
    a: Sequence[float],
    b: Sequence[float],
    *,
    higher_is_better: bool,
    confidence: float = 0.95,
    detect_pct: float | None = None,
    alpha: float = ALPHA,
) -> Change:
    """The change and p-value; the verdict comes from `decide` once all p-values are known."""
    interval = median_ratio_interval(a, b, confidence)
    p_value = mann_whitney_u(a, b)[1] if a and b else None
    spread = log_spread(a, b)
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
        detectable_pct=(
            detectable_change_pct(spread, len(a), len(b), alpha) if spread is not None else None
        ),
        detect_pct=detect_pct,
        runs_to_detect=(
            runs_per_side(spread, detect_pct, alpha) if spread is not None and detect_pct else None
        ),
        spread=spread,
    )


def decide(change: Change, noise_pct: float, alpha: float = ALPHA, comparisons: int = 1) -> str:
    low, high = change.ci_low_pct, change.ci_high_pct
    if low is None or high is None or change.p_adjusted is None:
        return TOO_FEW
    if change.p_adjusted < alpha and low > noise_pct:
        return BETTER if change.higher_is_better else WORSE
    if change.p_adjusted < alpha and high < -noise_pct:
        return WORSE if change.higher_is_better else BETTER
    could_reach = min(change.n_a, change.n_b) >= min_runs_per_side(comparisons, alpha)
    if could_reach and -noise_pct <= low and high <= noise_pct:
        return SAME
    return INCONCLUSIVE


def runs_needed(change: Change, noise_pct: float, alpha: float, comparisons: int) -> int | None:
    """Runs per side that would detect a change of the observed size (at least the noise
    threshold) at 80% power, Holm over `comparisons`; None without a spread to go by."""
    if change.spread is None or change.change_pct is None:
        return None
    size = max(abs(change.change_pct), noise_pct, 0.1)
    return runs_per_side(change.spread, size, alpha / comparisons, comparisons=comparisons)


def verdict_words(change: Change) -> str:
    """The verdict as the console, the page and its legend say it."""
    if change.verdict == INCONCLUSIVE:
        if change.runs_needed is None:
            return "inconclusive: too few runs to detect a change of this size"
        return (
            "inconclusive: too few runs to detect a change of this size "
            f"({change.runs_needed} runs per side would)"
        )
    return change.verdict


def adjust_and_decide(
    changes: Sequence[Change], noise_pct: float, alpha: float = ALPHA
) -> list[Change]:
    """Holm's correction across `changes` (one metric over many points), then the verdicts
    (an inconclusive one with the runs per side that would decide it)."""
    adjusted = holm([c.p_value if c.ci_low_pct is not None else None for c in changes])
    tested = sum(p is not None for p in adjusted) or 1
    out = []
    for change, p in zip(changes, adjusted, strict=True):
        change = replace(change, p_adjusted=p)
        verdict = decide(change, noise_pct, alpha, tested)
        needed = runs_needed(change, noise_pct, alpha, tested) if verdict == INCONCLUSIVE else None
        out.append(replace(change, verdict=verdict, runs_needed=needed))
    return out
