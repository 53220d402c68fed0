"""What a capacity search writes and how it reads its runs: capacity.json (rewritten after each
level), each objective's result from its search's answer, the target's monthly cost, and whether
a run's host was busy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dbscale.capacity.search import CapacityAnswer
from dbscale.errors import ResultsError
from dbscale.plan.objectives import Objective
from dbscale.results.capacity_file import (
    CapacityFile,
    CapacityStudy,
    LevelResult,
    ObjectiveResult,
    read_capacity,
    set_aside_capacity,
    write_capacity,
)
from dbscale.results.cost import monthly_cost
from dbscale.results.record import RunRecord
from dbscale.targets.spec import TargetEntry


class CapacityBook:
    """capacity.json of a results directory: the searches so far, rewritten after each level."""

    def __init__(self, directory: Path, note: Callable[[str], None] = lambda text: None) -> None:
        self.directory = directory
        try:
            self.study = read_capacity(directory) or CapacityStudy()
        except ResultsError as exc:
            # It is rebuilt from runs.jsonl as the resumed search replays its levels.
            damaged = set_aside_capacity(directory)
            note(f"note: {exc.message}; set aside as {damaged.name}, rebuilt from runs.jsonl")
            self.study = CapacityStudy()

    def save(self, found: CapacityFile) -> None:
        self.study = self.study.with_search(found)
        write_capacity(self.directory, self.study)


def monthly(target: TargetEntry) -> float | None:
    """The target's monthly cost on demand (730 h), when it is priced."""
    if target.prices is None:
        return None
    cost = monthly_cost(target.prices, vcpus=target.vcpu_count, memory_gib=target.memory,
                        storage_gb=target.storage_gb, ha=target.ha)  # fmt: skip
    return cost.total(reserved=False)


def host_busy(record: RunRecord) -> str | None:
    """Why the run's host was busy (other processes took a material share of its CPU), or None
    (not busy, or not observed)."""
    verdict = record.limited_by
    return verdict.host_warning if verdict is not None else None


def objective_result(
    objective: Objective,
    answer: CapacityAnswer,
    levels: list[LevelResult],
    measure_needed: float | None,
) -> ObjectiveResult:
    # The fail that bounds the answer, when every run of it had a busy host: maybe the host's.
    bounding = [x for x in levels if answer.lowest_fail is not None
                and x.level == answer.lowest_fail and x.state != "pass"]  # fmt: skip
    host_limited = bool(bounding) and all(x.host_busy for x in bounding)
    confirmations = [
        x.achieved
        for x in levels
        if answer.capacity is not None and x.level == answer.capacity and x.state == "pass"
    ]
    return ObjectiveResult(
        objective=objective.text, percentile=objective.percentile, limit_ms=objective.limit_ms,
        capacity=answer.capacity, highest_pass=answer.highest_pass,
        lowest_fail=answer.lowest_fail, at_ceiling=answer.at_ceiling,
        never_passed=answer.capacity is None and answer.short_level is None
        and answer.drift is None and not answer.exhausted,
        confirmations=confirmations, short_level=answer.short_level,
        measure_needed_s=measure_needed, host_limited=host_limited,
        drift_high=answer.drift.high if answer.drift else None,
        drift_low=answer.drift.low if answer.drift else None, exhausted=answer.exhausted,
    )  # fmt: skip
