"""The observer's session lost mid-run (a server restart, a terminated backend) and found again:
the gap is kept with its times and cause, the server's counters are differenced within each
stretch the session saw (a restart resets them), and the run's "limited by" says which part of
the run its server evidence covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dbscale.observe.section import ObservedGap, ObserveSection


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


def mark_gaps(
    section: ObserveSection, gaps: Sequence[SessionGap], start: float, end: float
) -> ObserveSection:
    """The section with its `gaps`, and a note of them in its verdict's evidence."""
    if not gaps:
        return section
    missing = sum(g.length_s(end) for g in gaps)
    update: dict[str, object] = {
        "gaps": [
            ObservedGap(
                from_s=round(g.lost_s - start, 3),
                to_s=round(g.back_s - start, 3) if g.back_s is not None else None,
                reason=g.reason,
            )
            for g in gaps
        ]
    }
    verdict = section.limited_by
    if verdict is not None:
        evidence = (
            f"{verdict.evidence} [server statistics missing for {missing:.1f} s of the run: the "
            "observer's session was " + "; ".join(g.describe(start) for g in gaps) + "]"
        )
        update["limited_by"] = verdict.model_copy(update={"evidence": evidence})
    return section.model_copy(update=update)
