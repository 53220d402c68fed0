"""Script runs' per-command latencies (pgbench `-r`) in the report: per point, each command's
figures summed over the point's counted runs (counts and times add exactly; the mean is their
quotient, never an average of means)."""

from __future__ import annotations

from dataclasses import dataclass

from dbscale.report.markup import Markup, element, join
from dbscale.report.tables import Cell, table_section
from dbscale.report.view import ResultsView


@dataclass
class _Sums:
    count: int = 0
    sum_ms: float = 0.0
    max_ms: float | None = None
    failures: int = 0


def command_table(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    headers = ["point", "script", "line", "command", "count", "mean ms", "max ms", "failures"]
    rows: list[list[Cell]] = []
    for point in study.points:
        sums: dict[tuple[str, int, str], _Sums] = {}
        for run in point.runs:
            for c in run.record.commands:
                entry = sums.setdefault((c.script, c.line, c.command), _Sums())
                entry.count += c.count
                entry.sum_ms += c.sum_ms
                entry.failures += c.failures
                if c.max_ms is not None:
                    entry.max_ms = max(entry.max_ms or 0.0, c.max_ms)
        for (script, line, command), s in sums.items():
            mean = s.sum_ms / s.count if s.count else None
            rows.append([point.label, script, line, command, s.count, mean, s.max_ms, s.failures])
    return headers, rows


def commands_section(study: ResultsView) -> Markup:
    """The section, when the study ran scripts."""
    headers, rows = command_table(study)
    if not rows:
        return Markup()
    intro = join([
        "Each command of each script (pgbench ", element("code", "-r"), "): how often it ran "
        "over the point's runs, its mean and largest latency and its failures.",
    ])  # fmt: skip
    return table_section("commands", "Script commands", intro, headers, rows)
