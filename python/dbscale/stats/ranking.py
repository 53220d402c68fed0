"""Ranks of configurations by the median of their per-run values, with how sure each rank is.

The rank interval is a percentile bootstrap: each resample draws every configuration's runs
again (with replacement, within that configuration), takes the medians and ranks them; a
configuration's 95% rank interval spans the 2.5th to the 97.5th percentile of its ranks. Ranks
are competition ranks (1 = best; equal medians share the better rank). Configurations whose
rank intervals share a rank form a tie group: taken in rank order, a group grows while every
interval in it still overlaps every other, so each group is a set of configurations no run
count here can tell apart ("statistical dead heat"). A configuration with fewer than
`MIN_RUNS_TO_RANK` runs is listed but not ranked: a bootstrap over one or two runs has no spread
to go by and would call it certain.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MIN_RUNS_TO_RANK = 3
RANK_RESAMPLES = 2000


@dataclass(frozen=True)
class Ranked:
    key: str
    n: int
    median: float
    rank: int | None  # None: too few runs to rank
    rank_low: int | None = None
    rank_high: int | None = None
    group: int | None = None  # tie group, 1 = the group of the best
    group_size: int = 1

    @property
    def dead_heat(self) -> bool:
        return self.group_size > 1


def _competition_ranks(medians: Mapping[str, float], higher_is_better: bool) -> dict[str, int]:
    sign = -1.0 if higher_is_better else 1.0
    ordered = sorted(medians.values(), key=lambda v: sign * v)
    first: dict[float, int] = {}
    for position, value in enumerate(ordered, start=1):
        first.setdefault(value, position)
    return {key: first[value] for key, value in medians.items()}


def _percentile(sorted_values: Sequence[int], q: float) -> int:
    """The lower (q < 0.5) or upper (q >= 0.5) empirical quantile, so the interval holds at
    least the wanted share of resamples."""
    position = q * (len(sorted_values) - 1)
    index = math.floor(position) if q < 0.5 else math.ceil(position)
    return sorted_values[index]


def rank_configurations(
    samples: Mapping[str, Sequence[float]],
    *,
    higher_is_better: bool,
    confidence: float = 0.95,
    resamples: int = RANK_RESAMPLES,
) -> list[Ranked]:
    """Every configuration with its rank, rank interval and tie group, best first (unranked
    ones last, by median)."""
    rankable = {k: sorted(v) for k, v in samples.items() if len(v) >= MIN_RUNS_TO_RANK}
    medians = {k: statistics.median(v) for k, v in samples.items() if v}
    ranks = _competition_ranks({k: medians[k] for k in rankable}, higher_is_better)
    rng = random.Random(repr(sorted(rankable.items())))  # the same runs give the same intervals
    drawn: dict[str, list[int]] = {k: [] for k in rankable}
    for _ in range(resamples if len(rankable) > 1 else 0):
        resampled = {k: statistics.median(rng.choices(v, k=len(v))) for k, v in rankable.items()}
        for key, rank in _competition_ranks(resampled, higher_is_better).items():
            drawn[key].append(rank)
    tail = (1.0 - confidence) / 2.0
    bounds: dict[str, tuple[int, int]] = {}
    for key in rankable:
        found = sorted(drawn[key]) or [ranks[key]]
        bounds[key] = (_percentile(found, tail), _percentile(found, 1.0 - tail))
    order = sorted(rankable, key=lambda k: (ranks[k], k))
    groups = _tie_groups(order, bounds)
    sign = -1.0 if higher_is_better else 1.0
    ranked = [
        Ranked(key, len(samples[key]), medians[key], ranks[key], *bounds[key], *groups[key])
        for key in order
    ]
    unranked = sorted(
        (k for k in medians if k not in rankable), key=lambda k: (sign * medians[k], k)
    )
    return ranked + [Ranked(k, len(samples[k]), medians[k], None) for k in unranked]


def _tie_groups(
    order: Sequence[str], bounds: Mapping[str, tuple[int, int]]
) -> dict[str, tuple[int, int]]:
    """(group number, group size) per configuration: consecutive in rank order while every
    rank interval in the group shares a rank with every other."""
    groups: list[list[str]] = []
    low, high = 0, 0
    for key in order:
        key_low, key_high = bounds[key]
        if groups and max(low, key_low) <= min(high, key_high):
            groups[-1].append(key)
            low, high = max(low, key_low), min(high, key_high)
        else:
            groups.append([key])
            low, high = key_low, key_high
    return {key: (number, len(group)) for number, group in enumerate(groups, 1) for key in group}
