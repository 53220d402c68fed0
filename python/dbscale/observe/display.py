"""How the verdict is shown: one `limited by:` line after each run, and a loud warning (after
the run and again under the summary table) when the client itself was a bottleneck.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

Record = Mapping[str, Any]


def limited_by(record: Record) -> Mapping[str, Any]:
    verdict = (record.get("observe") or {}).get("limited_by")
    return verdict if isinstance(verdict, Mapping) else {}


def verdict_line(record: Record) -> str | None:
    verdict = limited_by(record)
    if not verdict:
        return None
    return f"limited by: {verdict.get('summary')} — {verdict.get('evidence')}"


def print_verdict(console: Console, record: Record) -> None:
    """After a run's pgbench-shaped block (not after a warm-up)."""
    line = verdict_line(record)
    if line is None or record.get("warmup"):
        return
    console.print(line, highlight=False, soft_wrap=True, markup=False)
    verdict = limited_by(record)
    for also in verdict.get("also") or []:
        console.print(
            f"  also: {also.get('verdict')} — {also.get('evidence')}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
    if verdict.get("client_bound"):
        _warn(console, str(verdict.get("warning")), str(verdict.get("hint")))
    console.print()


def print_limits(console: Console, records: Sequence[Record]) -> None:
    """Under the summary table: each measured run's verdict (numbered like the table), and a
    warning naming the runs where the client was a bottleneck."""
    measured = [r for r in records if not r.get("warmup")]
    verdicts = [(i, limited_by(r)) for i, r in enumerate(measured, start=1)]
    verdicts = [(i, v) for i, v in verdicts if v]
    if not verdicts:
        return
    console.print(
        "limited by: " + " · ".join(f"{i} {v.get('verdict')}" for i, v in verdicts),
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    bound = [(i, v) for i, v in verdicts if v.get("client_bound")]
    if bound:
        runs = ", ".join(str(i) for i, _ in bound)
        first = bound[0][1]
        _warn(console, f"run {runs}: {first.get('warning')}", str(first.get("hint")))


def _warn(console: Console, message: str, hint: str) -> None:
    console.print(f"warning: {message}", style="bold red", highlight=False, soft_wrap=True)
    console.print(f"hint: {hint}", highlight=False, soft_wrap=True, markup=False)
