"""From a level's run record to what the judge reads: its measured seconds after the settle, each
with its transactions, failures and transactions over each objective's limit (counted in the
second's own histogram, which capacity runs keep), and whether the load generator fell behind.
"""

from __future__ import annotations

from collections.abc import Sequence

from dbscale import core
from dbscale.capacity.judge import LevelFacts, Second
from dbscale.plan.objectives import Objective
from dbscale.results.record import RunRecord


def level_facts(
    record: RunRecord, objectives: Sequence[Objective], *, offered: float | None, settle_s: float
) -> LevelFacts:
    """The seconds of `record` after its first `settle_s`, as the judge reads them."""
    measured = [i for i in record.window_intervals if i.t_s > settle_s + 1e-9]
    with_histograms = [i for i in measured if i.detail is not None and i.detail.histogram]
    limits = [o.limit_ms for o in objectives]
    counts = core.histogram_counts_above([i.detail.histogram for i in with_histograms], limits)  # type: ignore[union-attr]
    by_time = {i.t_s: c for i, c in zip(with_histograms, counts, strict=True)}
    seconds = []
    for interval in measured:
        found = by_time.get(interval.t_s)
        over = tuple(found.above) if found is not None else tuple(0 for _ in objectives)
        seconds.append(Second(interval.transactions, interval.failed, over))
    span = (measured[-1].t_s - settle_s) if measured else 0.0
    achieved = sum(s.transactions for s in seconds) / span if span > 0 else 0.0
    verdict = record.observe.limited_by if record.observe is not None else None
    bound = verdict is not None and verdict.client_bound
    extra: tuple[str, ...] = ()
    if record.verdict.status in ("failed", "outage"):
        extra = (f"the run {record.verdict.status}: {record.verdict.message}",)
    elif with_histograms != measured:
        extra = ("some seconds have no histogram: the level cannot be judged",)
    elif record.tpcc is not None and not record.tpcc.passed:  # TPC-C's own rule holds too
        extra = (f"TPC-C {record.tpcc.rule.name} rule: " + "; ".join(record.tpcc.reasons),)
    return LevelFacts(
        offered=offered,
        achieved=achieved,
        seconds=seconds,
        measured_s=span,
        generator_bound=bound,
        generator_note=verdict.evidence if bound and verdict is not None else "",
        extra_reasons=extra,
    )
