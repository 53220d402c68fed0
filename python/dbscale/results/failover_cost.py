"""What a failover (or any fault step) cost, over a point's runs: for each planned step, the
stretch without a successful transaction (median and range) and the time until throughput was
back to 90% of what it was before, counted from the step and from the scenario's first step.
Read by the report's downtime table and by the headline on the console and the page: the
question an availability study asks, answered first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from dbscale.results.record import RunRecord


@dataclass(frozen=True)
class StepCost:
    point: str  # the point's label ("" for a one-point study)
    step: str  # `restart primary`
    downtime_s: tuple[float, ...]  # per run: the stretch without a success
    back_s: tuple[float, ...]  # per run back to 90%: from the step
    since_first_s: tuple[float, ...]  # ... and from the scenario's first step
    runs: int

    @property
    def not_back(self) -> int:
        """Runs that ended before throughput was back to 90%."""
        return self.runs - len(self.back_s)

    def sentence(self) -> str:
        """`restart primary (clients=8): 4.2 s without a success (3.9-5.1 s over 3 runs), back
        to 90% after 6.0 s`."""
        at = f" ({self.point})" if self.point else ""
        down = self.downtime_s
        spread = (f" ({min(down):.1f}-{max(down):.1f} s over {self.runs} runs)"
                  if self.runs > 1 else "")  # fmt: skip
        if self.back_s:
            back = f"back to 90% of the throughput after {median(self.back_s):.1f} s"
            if self.not_back:
                back += f" ({self.not_back} of {self.runs} runs not back before they ended)"
        else:
            back = "throughput not back to 90% before the runs ended"
        return f"{self.step}{at}: {median(down):.1f} s without a success{spread}, {back}"


def step_costs(points: Sequence[tuple[str, Sequence[RunRecord]]]) -> list[StepCost]:
    """Each point's (label, measured runs) planned steps, in the order they first happen."""
    out: list[StepCost] = []
    for label, records in points:
        steps: dict[str, list[tuple[float, float | None, float]]] = {}
        for record in records:
            windows = record.fault_windows
            for window in windows:
                name = f"{window.action} {window.planned_node or window.node or '?'}"
                steps.setdefault(name, []).append(
                    (window.overall.seconds or 0.0, window.recovered_after_s,
                     window.at_s - windows[0].at_s)
                )  # fmt: skip
        for name, found in steps.items():
            back = [b for _, b, _ in found if b is not None]
            since = [b + offset for _, b, offset in found if b is not None]
            out.append(StepCost(label, name, tuple(d for d, _, _ in found), tuple(back),
                                tuple(since), len(found)))  # fmt: skip
    return out


def failover_sentences(
    points: Sequence[tuple[str, Sequence[RunRecord]]], most: int = 4
) -> list[str]:
    """The headline of a study with fault steps: what each step cost (at most `most` lines)."""
    costs = step_costs(points)
    lines = [c.sentence() for c in costs[:most]]
    if len(costs) > most:
        lines.append(f"(and {len(costs) - most} more steps in the downtime table)")
    return lines


def by_point(records: Sequence[RunRecord]) -> list[tuple[str, list[RunRecord]]]:
    """Measured runs grouped by their point, in order ("" for the label of a lone point)."""
    groups: dict[str, list[RunRecord]] = {}
    for record in records:
        if record.measured:
            groups.setdefault(record.group_key, []).append(record)
    if len(groups) == 1:
        return [("", next(iter(groups.values())))]
    return list(groups.items())
