"""How the verdict is shown: one `limited by:` line after each run, and a loud warning (after
the run and again under the summary table) when the client itself was a bottleneck, or when the
server stalled every client.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from dbscale.observe.section import LimitedBy
from dbscale.results.record import RunRecord


def verdict_line(record: RunRecord) -> str | None:
    verdict = record.limited_by
    if verdict is None or not verdict.verdict:
        return None
    return f"limited by: {verdict.summary} — {verdict.evidence}"


def print_verdict(console: Console, record: RunRecord) -> None:
    """After a run's pgbench-shaped block (not after a warm-up)."""
    line = verdict_line(record)
    verdict = record.limited_by
    if line is None or verdict is None or record.warmup:
        return
    console.print(line, highlight=False, soft_wrap=True, markup=False)
    for also in verdict.also:
        console.print(
            f"  also: {also.verdict} — {also.evidence}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
    if verdict.client_bound:
        _warn(console, str(verdict.warning), str(verdict.hint))
    if verdict.host_warning:  # the warning itself comes once, under the summary (print_limits)
        console.print("  also: the host was shared with other processes (see the warning at the "
                      "end)", highlight=False, soft_wrap=True, markup=False)  # fmt: skip
    console.print()


def print_limits(console: Console, records: Sequence[RunRecord]) -> None:
    """Under the summary table: each measured run's verdict (numbered like the table), and a
    warning naming the runs where the client was a bottleneck."""
    measured = [r for r in records if not r.warmup]
    verdicts: list[tuple[int, LimitedBy]] = [
        (i, r.limited_by)
        for i, r in enumerate(measured, start=1)
        if r.limited_by is not None and r.limited_by.verdict
    ]
    if not verdicts:
        return
    console.print(
        "limited by: " + " · ".join(f"{i} {v.verdict}" for i, v in verdicts),
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    bound = [(i, v) for i, v in verdicts if v.client_bound]
    if bound:
        runs = ", ".join(str(i) for i, _ in bound)
        first = bound[0][1]
        _warn(console, f"run {runs}: {first.warning}", str(first.hint))
    shared = [(i, v) for i, v in verdicts if v.host_warning]
    if shared:  # once for the study, naming the runs
        runs = ", ".join(str(i) for i, _ in shared)
        _warn(console, f"run {runs}: {shared[0][1].host_warning}", CONTAMINATION_HINT)


STALL_HINT = (
    "the server made every client wait without an error (a lock held by another session, a "
    "long statement, a checkpoint); the run counts in the statistics with the stall in its "
    "throughput: find what held the server (the observer's waits in runs.jsonl) and run again "
    "if it was not part of the load"
)


def stall_warning(record: RunRecord) -> str | None:
    """A sentence when the run stalled: its longest stall, and the lock waits the observer saw."""
    if not record.stalls:
        return None
    longest = max(record.stalls, key=lambda s: s.length_s)
    observe = record.observe
    waits = observe.waits if observe is not None else None
    lock = waits.classes.get("lock", 0.0) if waits is not None else 0.0
    why = f"; the server's sessions waited on locks in {lock:.0%} of their samples" if lock else ""
    end = longest.start_s + longest.length_s
    unanswered = observe is not None and any(
        gap.from_s < end and (gap.to_s is None or gap.to_s > longest.start_s)
        for gap in observe.gaps
    )
    if unanswered:  # its samples stop there: a lock share would be from before the stall
        why = "; the observer's session got no answer then either (a server that stopped answering)"
    more = f" ({len(record.stalls)} stalls)" if len(record.stalls) > 1 else ""
    return (
        f"stalled{more}: no transaction completed for {longest.length_s:.1f} s from "
        f"{longest.start_s:.1f} s, every client connected, no errors{why}"
    )


def print_stall(console: Console, record: RunRecord, label: str | None = None) -> None:
    warning = stall_warning(record)
    if warning is not None:
        _warn(console, f"{label}: {warning}" if label else warning, STALL_HINT)


CONTAMINATION_HINT = (
    "stop what else runs on this machine (top shows it; steal, `st` in top, is other virtual "
    "machines': a VM with dedicated CPUs avoids it) and run again; `--resume` only adds "
    "missing runs, so measure into a new directory"
)


def _warn(console: Console, message: str, hint: str) -> None:
    console.print(f"warning: {message}", style="bold red", highlight=False, soft_wrap=True)
    console.print(f"hint: {hint}", highlight=False, soft_wrap=True, markup=False)
