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


def print_client_bound_runs(console: Console, records: Sequence[Record]) -> None:
    """Under the summary table: which measured runs had the client as a bottleneck."""
    measured = [r for r in records if not r.get("warmup")]
    bound = [i for i, r in enumerate(measured, start=1) if limited_by(r).get("client_bound")]
    if not bound:
        return
    runs = ", ".join(str(i) for i in bound)
    verdict = limited_by(measured[bound[0] - 1])
    _warn(console, f"run {runs}: {verdict.get('warning')}", str(verdict.get("hint")))


def _warn(console: Console, message: str, hint: str) -> None:
    console.print(f"warning: {message}", style="bold red", highlight=False, soft_wrap=True)
    console.print(f"hint: {hint}", highlight=False, soft_wrap=True, markup=False)
