"""The change of one tool against the other, as the bench scripts print it."""

from __future__ import annotations

from dbscale.stats.comparison import compare_samples


def significance(baseline: list[float], candidate: list[float]) -> str:
    """The change of candidate against baseline with its 95% CI (ratio of the medians,
    percentile bootstrap) and Mann-Whitney's p, or why there is none."""
    change = compare_samples("", baseline, candidate, higher_is_better=True)
    if change.change_pct is None or change.p_value is None:
        return "(too few runs for a CI)"
    return (
        f"change {change.change_pct:+5.1f}% [{change.ci_low_pct:+5.1f}, "
        f"{change.ci_high_pct:+5.1f}] p={change.p_value:.2f}"
    )
