"""The search's answer on the console: each objective's capacity with its bracket, their
geometric mean, and every level with its verdict and why."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from dbscale.results.capacity_file import CapacityFile, answer_lines, number
from dbscale.results.text_tables import text_table


def print_capacity(out: Console, found: CapacityFile, path: Path) -> None:
    table = text_table(("run", "phase", "level", "achieved", "p99 ms", "verdict", "why"),
                       left={"run", "phase", "verdict", "why"},
                       title=f"capacity levels ({found.unit})")  # fmt: skip
    for x in found.levels:
        table.add_row(x.run_key, x.phase, number(x.level), f"{x.achieved:,.1f}", number(x.p99_ms),
                      x.state, "; ".join(x.reasons) or "-")  # fmt: skip
    out.print(table)
    for line in answer_lines(found):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(f"capacity: {path / 'capacity.json'}", highlight=False)
