"""A level's verdict from synthetic seconds with known shares over the limit."""

from __future__ import annotations

import random

import pytest

from dbscale.capacity.judge import (
    LevelFacts,
    Second,
    State,
    batches,
    binomial_upper,
    judge,
    transactions_to_pass,
)
from dbscale.errors import ConfigError
from dbscale.plan.objectives import parse_objective, parse_share

P99 = parse_objective("p99<=20ms")


def seconds(share: float, per_second: int = 1000, count: int = 30, seed: int = 1) -> list[Second]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        over = sum(rng.random() < share for _ in range(per_second))
        out.append(Second(per_second, 0, (over,)))
    return out


def verdict(share: float, *, final: bool = False, **facts: object) -> State:
    level = LevelFacts(offered=1000.0, achieved=1000.0, seconds=seconds(share), **facts)  # type: ignore[arg-type]
    return judge(level, [P99], max_errors=0.001, final=final).state


def test_far_below_and_far_above_the_allowance_are_decided() -> None:
    assert verdict(0.002) is State.PASS
    assert verdict(0.05) is State.FAIL


def test_at_the_allowance_the_level_is_undecided_then_marginal() -> None:
    assert verdict(0.01) is State.INCONCLUSIVE
    assert verdict(0.01, final=True) is State.MARGINAL


def test_too_few_transactions_cannot_pass_and_enough_clean_ones_can() -> None:
    # None over the limit in 200 transactions: the exact bound (1.5%) is above 1%.
    few = LevelFacts(offered=20.0, achieved=20.0, seconds=seconds(0.0, per_second=20, count=10))
    result = judge(few, [P99], max_errors=0.0, final=True)
    # Nothing tells of a fail: short (the search stops and asks for a longer measure), never a
    # marginal fail that would walk the search down to levels shorter still.
    assert result.state is State.SHORT and result.too_short and not result.passed
    assert "200 transactions, 0 over the limit: about 299 at this share" in result.reasons[0]
    assert result.checks[0].transactions_to_decide == 299
    # None in 2,000: the bound is 0.15%, a pass before the 5,000 a p99 estimate wants.
    clean = LevelFacts(offered=100.0, achieved=100.0, seconds=seconds(0.0, per_second=100,
                                                                       count=20))  # fmt: skip
    assert judge(clean, [P99], max_errors=0.0, final=False).state is State.PASS


def test_few_transactions_over_the_allowance_are_a_marginal_fail_not_short() -> None:
    # 3 of 200 over (1.5%): more transactions would not show it within 1%.
    rows = [Second(20, 0, (1 if i < 3 else 0,)) for i in range(10)]
    result = judge(LevelFacts(20.0, 20.0, rows), [P99], max_errors=0.0, final=True)
    assert result.state is State.MARGINAL and not result.too_short
    assert result.checks[0].transactions_to_decide is None


def test_the_transactions_a_share_needs_to_pass() -> None:
    assert transactions_to_pass(0.0, 0.01) == 299  # the rule of three
    assert transactions_to_pass(0.005, 0.01) is not None
    assert 1000 < (transactions_to_pass(0.005, 0.01) or 0) < 10_000
    assert transactions_to_pass(0.01, 0.01) is None and transactions_to_pass(0.02, 0.01) is None


def test_a_share_interval_never_ends_above_everything() -> None:
    wild = [Second(10, 0, (10 if i % 2 else 0,)) for i in range(10)]
    [c] = judge(LevelFacts(None, 10.0, wild), [P99], max_errors=0.0, final=False).checks
    assert c.high is not None and c.high <= 1.0


def test_the_exact_binomial_bound() -> None:
    assert binomial_upper(0, 300) == pytest.approx(0.00994, abs=1e-4)  # the rule of three
    assert binomial_upper(10, 1000) == pytest.approx(0.0169, abs=2e-4)
    assert binomial_upper(5, 5) == 1.0 and binomial_upper(0, 0) == 1.0


def test_short_delivery_errors_and_a_lagging_generator_fail_the_level() -> None:
    quiet = seconds(0.0)
    short = judge(LevelFacts(1000.0, 900.0, quiet, measured_s=30), [P99], 0.001, final=False)
    assert short.state is State.FAIL and "delivered 90% of the offered rate" in short.reasons[0]
    # 94% of 30,000 expected arrivals is short (3 sd is 1.7%); of 100 it is chance (30%).
    assert judge(LevelFacts(1000.0, 940.0, quiet, measured_s=30), [P99], 0.001,
                 final=False).state is State.FAIL  # fmt: skip
    few = [Second(10, 0, (0,)) for _ in range(10)]
    assert "delivered" not in " ".join(
        judge(LevelFacts(10.0, 9.6, few, measured_s=10), [P99], 0.001, final=True).reasons
    )
    erring = [Second(s.transactions, 5, s.over) for s in quiet]
    errors = judge(LevelFacts(1000.0, 1000.0, erring), [P99], 0.001, final=False)
    assert errors.state is State.FAIL and "errors 0.498% of transactions" in errors.reasons[0]
    lagging = judge(LevelFacts(1000.0, 1000.0, quiet, generator_bound=True), [P99], 0.001,
                    final=False)  # fmt: skip
    assert lagging.state is State.FAIL and lagging.generator_bound


def test_batches_are_consecutive_and_cover_every_second() -> None:
    items = seconds(0.0, count=23)
    groups = batches(items, 10)
    assert len(groups) == 10 and sum(len(g) for g in groups) == 23


@pytest.mark.parametrize(
    ("text", "percentile", "limit"),
    [("p99<=20ms", 99, 20), ("p99.9 <= 100 ms", 99.9, 100), ("p50<500us", 50, 0.5),
     ("P95<=1s", 95, 1000)],
)  # fmt: skip
def test_objectives_parse(text: str, percentile: float, limit: float) -> None:
    objective = parse_objective(text)
    assert (objective.percentile, objective.limit_ms) == (percentile, limit)


@pytest.mark.parametrize("text", ["p99", "p100<=1ms", "99<=1ms", "p99<=20", "p99>=20ms", ""])
def test_bad_objectives_are_one_error(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_objective(text)
    assert repr(text) in info.value.message and info.value.hint


def test_shares_parse() -> None:
    assert parse_share("0.1%", 0.0, 1.0, "0.1%") == pytest.approx(0.001)
    assert parse_share("0.02", 0.0, 1.0, "0.1%") == 0.02
    assert parse_share("50%", 0.001, 0.5, "2%") == 0.5
    for text, low, high in [("150%", 0.0, 1.0), ("100%", 0.0, 1.0), ("51%", 0.001, 0.5),
                            ("0.01%", 0.001, 0.5), ("nan", 0.0, 1.0), ("x", 0.0, 1.0)]:  # fmt: skip
        with pytest.raises(ConfigError):
            parse_share(text, low, high, "e.g.")
