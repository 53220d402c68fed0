"""Ranks with bootstrap rank intervals and tie groups (stats/ranking.py)."""

from __future__ import annotations

import random

from dbscale.stats.ranking import MIN_RUNS_TO_RANK, rank_configurations


def _runs(rng: random.Random, centre: float, n: int = 8, noise: float = 0.02) -> list[float]:
    return [centre * (1 + rng.gauss(0, noise)) for _ in range(n)]


def test_clear_differences_get_sure_ranks() -> None:
    rng = random.Random(3)
    samples = {"a": _runs(rng, 100), "b": _runs(rng, 150), "c": _runs(rng, 200)}
    ranked = rank_configurations(samples, higher_is_better=True)
    assert [(r.key, r.rank, r.rank_low, r.rank_high) for r in ranked] == [
        ("c", 1, 1, 1), ("b", 2, 2, 2), ("a", 3, 3, 3),
    ]  # fmt: skip
    assert not any(r.dead_heat for r in ranked)
    lowest_first = rank_configurations(samples, higher_is_better=False)
    assert [r.key for r in lowest_first] == ["a", "b", "c"]


def test_overlapping_configurations_form_a_dead_heat() -> None:
    rng = random.Random(4)
    samples = {
        "a": _runs(rng, 200),
        "b": _runs(rng, 201),
        "c": _runs(rng, 199),
        "d": _runs(rng, 120),
    }
    ranked = {r.key: r for r in rank_configurations(samples, higher_is_better=True)}
    assert {ranked[k].group for k in "abc"} == {1}
    assert ranked["a"].group_size == 3 and ranked["a"].dead_heat
    assert ranked["d"].group == 2 and not ranked["d"].dead_heat
    assert ranked["d"].rank == ranked["d"].rank_low == ranked["d"].rank_high == 4
    for key in "abc":
        assert ranked[key].rank_low is not None and ranked[key].rank_high is not None
        assert ranked[key].rank_low <= ranked[key].rank <= ranked[key].rank_high
        assert ranked[key].rank_high - ranked[key].rank_low >= 1


def test_too_few_runs_are_listed_not_ranked() -> None:
    rng = random.Random(5)
    samples = {"a": _runs(rng, 100), "one": [500.0], "two": [400.0, 410.0]}
    ranked = rank_configurations(samples, higher_is_better=True)
    assert MIN_RUNS_TO_RANK == 3
    assert [(r.key, r.rank) for r in ranked] == [("a", 1), ("one", None), ("two", None)]


def test_the_same_runs_give_the_same_intervals() -> None:
    rng = random.Random(6)
    samples = {k: _runs(rng, 100, noise=0.05) for k in "abcdef"}
    assert rank_configurations(samples, higher_is_better=True) == rank_configurations(
        dict(reversed(samples.items())), higher_is_better=True
    )


def test_coverage_of_rank_intervals() -> None:
    """Five configurations 3% apart, 6 runs each with 3% noise, drawn 100 times: each true rank
    falls inside its 95% interval (measured: all 500 intervals; the ranks of neighbours move
    together, so the interval is conservative)."""
    rng = random.Random(7)
    inside = total = 0
    centres = {f"c{i}": 100 * (1.03**i) for i in range(5)}
    truth = {key: 5 - i for i, key in enumerate(centres)}
    for _ in range(100):
        samples = {k: _runs(rng, c, n=6, noise=0.03) for k, c in centres.items()}
        for r in rank_configurations(samples, higher_is_better=True, resamples=400):
            assert r.rank_low is not None and r.rank_high is not None
            inside += r.rank_low <= truth[r.key] <= r.rank_high
            total += 1
    assert inside / total >= 0.95
