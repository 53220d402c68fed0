"""MSER-5 on per-second throughput."""

from __future__ import annotations

import random

from dbscale.stats.steady_state import mser5_cutoff, steady_state


def test_a_flat_series_is_steady_and_a_ramp_settles() -> None:
    rng = random.Random(1)
    flat = [1000 + rng.gauss(0, 10) for _ in range(60)]
    assert steady_state(flat).status in ("steady", "settled")
    assert (steady_state(flat).cutoff_s or 0) <= 10
    ramp = [100 + 45 * i for i in range(20)] + [1000 + rng.gauss(0, 10) for _ in range(40)]
    result = steady_state(ramp)
    assert result.status == "settled"
    assert 10 <= (result.cutoff_s or 0) <= 25


def test_a_series_still_trending_has_no_steady_state() -> None:
    trend = [100.0 + 10 * i for i in range(60)]
    result = steady_state(trend)
    assert result.status == "none"
    assert not result.reached


def test_too_short_to_tell() -> None:
    assert steady_state([1.0] * 10).status == "short"
    assert mser5_cutoff([1.0] * 19) is None


def test_noise_alone_is_rarely_flagged() -> None:
    rng = random.Random(7)
    flagged = sum(
        steady_state([1000 + rng.gauss(0, 20) for _ in range(60)]).status == "none"
        for _ in range(200)
    )
    assert flagged <= 6  # a few percent at most
