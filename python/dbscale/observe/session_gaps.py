"""The observer's session lost mid-run (a server restart, a terminated backend) and found again:
the gap is kept with its times and cause, the server's counters are differenced within each
stretch the session saw (a restart resets them), and the run's "limited by" says which part of
the run its server evidence covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dbscale.values import JsonObject


@dataclass
class SessionGap:
    """The observer's session lost (a restart, a terminated backend) and when it came back."""

    lost_s: float
    reason: str
    back_s: float | None = None

    def describe(self, start: float) -> str:
        back = f"back at {self.back_s - start:.1f} s" if self.back_s is not None else "not back"
        return f"lost at {self.lost_s - start:.1f} s ({self.reason}), {back}"

    def length_s(self, end: float) -> float:
        return (self.back_s if self.back_s is not None else end) - self.lost_s


def mark_gaps(section: JsonObject, gaps: Sequence[SessionGap], start: float, end: float) -> None:
    """The `gaps` of the observe section, and a note in its verdict's evidence."""
    if not gaps:
        return
    missing = sum(g.length_s(end) for g in gaps)
    section["gaps"] = [
        {"from_s": round(g.lost_s - start, 3),
         "to_s": round(g.back_s - start, 3) if g.back_s is not None else None,
         "reason": g.reason}
        for g in gaps
    ]  # fmt: skip
    verdict = section.get("limited_by")
    if isinstance(verdict, dict):
        verdict["evidence"] = (
            f"{verdict.get('evidence', '')} [server statistics missing for {missing:.1f} s of "
            "the run: the observer's session was "
            + "; ".join(g.describe(start) for g in gaps)
            + "]"
        )
