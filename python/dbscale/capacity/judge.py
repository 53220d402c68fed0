"""One level's verdict. The measured seconds (after the settle) are cut into at least 10 batches
of consecutive seconds; for each objective, each batch's share of transactions over the limit,
and a 95% Student-t interval over the batch shares (batch means: robust to the autocorrelation
of consecutive transactions). A level passes an objective when the interval's upper end is
within the allowance (1% for p99) and the count's exact bound is too (none over the limit in
300 transactions shows 1%), fails it when the lower end is above, and is otherwise
inconclusive: measured longer. At the longest measure an undecided level whose share is at or
over the allowance is a fail reported as marginal; one under it that just gathered too few
transactions is *short*: no evidence either way, so the search stops and says how long a
measure would decide (a slow transaction at a low rate meets this, and going lower only makes
it shorter). A level also fails when it delivers under 97% of
the offered rate, when errors pass the allowed share, or when the load generator fell behind
(reported as the generator's limit, never the database's)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from dbscale.plan.objectives import Objective
from dbscale.stats.distributions import regularized_incomplete_beta, student_t_ppf

MIN_BATCHES = 10
MIN_DELIVERED = 0.97  # of the offered rate


class State(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"  # measure longer
    MARGINAL = "marginal"  # still inconclusive at the longest measure, at or over: a fail
    SHORT = "short"  # still inconclusive at the longest measure, under: too few to tell


@dataclass(frozen=True)
class Second:
    """One measured interval: its transactions, failures, and transactions over each
    objective's limit (in the objectives' order)."""

    transactions: int
    failed: int
    over: tuple[int, ...]


@dataclass(frozen=True)
class ObjectiveCheck:
    objective: Objective
    share: float  # of transactions over the limit, over the whole measure
    low: float | None  # 95% interval of the batch shares' mean
    high: float | None
    transactions: int
    state: State
    over: int = 0

    @property
    def transactions_to_decide(self) -> int | None:
        """The transactions that would let this share pass (its exact bound within the
        allowance), None when it is at or over the allowance: more would not pass it."""
        return transactions_to_pass(self.share, self.objective.allowance)

    def words(self) -> str:
        bound = "" if self.high is None else f" [{_pct(self.low)}, {_pct(self.high)}]"
        return (f"{self.objective.text}: {_pct(self.share)}{bound} over the limit, allowed "
                f"{_pct(self.objective.allowance)}")  # fmt: skip


@dataclass(frozen=True)
class LevelVerdict:
    state: State
    reasons: tuple[str, ...]
    checks: tuple[ObjectiveCheck, ...]
    delivered: float | None  # achieved / offered (open model)
    error_share: float
    generator_bound: bool = False
    too_short: bool = False  # undecided only for want of transactions

    @property
    def passed(self) -> bool:
        return self.state is State.PASS


@dataclass(frozen=True)
class LevelFacts:
    """What a level's run measured. `offered`: the open model's rate (None for a closed knob)."""

    offered: float | None
    achieved: float
    seconds: Sequence[Second]
    measured_s: float = 0.0  # the judged time (after the settle)
    generator_bound: bool = False
    generator_note: str = ""
    extra_reasons: tuple[str, ...] = field(default_factory=tuple)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.3g}%"


def batches(seconds: Sequence[Second], count: int) -> list[list[Second]]:
    """`seconds` in `count` consecutive groups of (nearly) equal length."""
    count = max(1, min(count, len(seconds)))
    size = len(seconds) / count
    return [list(seconds[round(i * size) : round((i + 1) * size)]) for i in range(count)]


def binomial_upper(over: int, total: int, confidence: float = 0.95) -> float:
    """The one-sided upper confidence bound of a share seen `over` times in `total` (exact,
    Clopper-Pearson): with none over in 300, about 1%."""
    if total <= 0:
        return 1.0
    if over >= total:
        return 1.0
    alpha = 1.0 - confidence

    def at_most_over(p: float) -> float:  # P(X <= over) for X ~ Binomial(total, p)
        return regularized_incomplete_beta(total - over, over + 1, 1.0 - p)

    low, high = over / total, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if at_most_over(middle) > alpha:
            low = middle
        else:
            high = middle
    return high


def transactions_to_pass(share: float, allowance: float) -> int | None:
    """The fewest transactions at `share` over the limit whose exact bound is within
    `allowance` (300 for none over a 1% allowance), None when `share` is not under it."""
    if share >= allowance:
        return None

    def passes(total: int) -> bool:
        return binomial_upper(math.ceil(share * total), total) <= allowance

    high = 64
    while not passes(high):
        high *= 2
        if high > 1 << 40:
            return None
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if passes(middle) else (middle, high)
    return high


def check(objective: Objective, index: int, seconds: Sequence[Second]) -> ObjectiveCheck:
    """One objective over the level's seconds."""
    total = sum(s.transactions for s in seconds)
    over = sum(s.over[index] for s in seconds)
    share = over / total if total else 0.0
    shares = [
        sum(s.over[index] for s in batch) / n
        for batch in batches(seconds, MIN_BATCHES)
        if (n := sum(s.transactions for s in batch)) > 0
    ]
    low = high = None
    if len(shares) >= 2:
        mean = sum(shares) / len(shares)
        sd = math.sqrt(sum((x - mean) ** 2 for x in shares) / (len(shares) - 1))
        half = student_t_ppf(0.975, len(shares) - 1) * sd / math.sqrt(len(shares))
        low, high = max(mean - half, 0.0), mean + half
    allowance = objective.allowance
    # A pass needs the batch interval within the allowance and, however few transactions over
    # the limit were seen, the count's own exact bound too (no exceedance in 100 transactions
    # does not show a 1% allowance is kept).
    if low is not None and low > allowance:
        state = State.FAIL
    elif high is not None and high <= allowance and binomial_upper(over, total) <= allowance:
        state = State.PASS
    else:
        state = State.INCONCLUSIVE
    if high is not None:
        high = min(high, 1.0)  # a share: the interval ends at 100%
    return ObjectiveCheck(objective, share, low, high, total, state, over)


def judge(
    facts: LevelFacts, objectives: Sequence[Objective], max_errors: float, *, final: bool
) -> LevelVerdict:
    """The level's verdict; `final`: no longer measure is possible (inconclusive is marginal)."""
    seconds = facts.seconds
    checks = tuple(check(o, i, seconds) for i, o in enumerate(objectives))
    reasons = list(facts.extra_reasons)
    done = sum(s.transactions for s in seconds)
    failed = sum(s.failed for s in seconds)
    error_share = failed / (done + failed) if done + failed else 0.0
    delivered = facts.achieved / facts.offered if facts.offered else None
    # Poisson arrivals: a level of N expected arrivals delivers within about 1/sqrt(N) of its
    # rate by chance; three of those are allowed below the 97% before the level fails.
    expected = (facts.offered or 0.0) * facts.measured_s
    floor = MIN_DELIVERED - (3 / math.sqrt(expected) if expected > 0 else 0.0)
    hard_fail = False
    if facts.generator_bound:
        reasons.append("the load generator fell behind" + (
            f" ({facts.generator_note})" if facts.generator_note else "") +
            ": this level measures the client, not the database")  # fmt: skip
        hard_fail = True
    if delivered is not None and delivered < floor:
        reasons.append(f"delivered {_pct(delivered)} of the offered rate (under {_pct(floor)}: "
                       "97% less the chance shortfall of its arrivals)")  # fmt: skip
        hard_fail = True
    if error_share > max_errors:
        reasons.append(f"errors {_pct(error_share)} of transactions, over {_pct(max_errors)}")
        hard_fail = True
    for c in checks:
        if c.state is State.FAIL:
            reasons.append(c.words())
    undecided = [c for c in checks if c.state is State.INCONCLUSIVE]
    # Short: every undecided objective is under its allowance and only wants transactions.
    too_short = bool(undecided) and all(
        (need := c.transactions_to_decide) is not None and need > c.transactions for c in undecided
    )
    if hard_fail or reasons:
        state = State.FAIL
    elif not undecided:
        state = State.PASS
    else:
        for c in undecided:
            need = c.transactions_to_decide
            if need is not None and need > c.transactions:
                why = (f"{c.transactions:,} transactions, {c.over:,} over the limit: about "
                       f"{need:,} at this share would show it within the allowance")  # fmt: skip
            else:
                why = "its interval spans the allowance"
            reasons.append(f"{c.words()}: undecided ({why})")
        final_state = State.SHORT if too_short else State.MARGINAL
        state = final_state if final else State.INCONCLUSIVE
    return LevelVerdict(state, tuple(reasons), checks, delivered, error_share,
                        facts.generator_bound, too_short)  # fmt: skip
