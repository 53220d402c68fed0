"""The capacity search as a pure state machine: verdicts in, the next level out, no clock and no
I/O, so it is tested on synthetic systems (tests/capacity/test_search.py).

1. Bracket geometrically from `start` (half the saturated rate): up by `GROWTH` while levels
   pass, down by it while they fail, until a pass and a fail are adjacent in the sequence.
2. Bisect on a log scale between the highest pass and the lowest fail until they are within
   the resolution (`hi <= lo * (1 + resolution)`).
3. Confirm the highest pass `confirm` more times; a failed confirmation makes that level the
   lowest fail and the search steps down by the resolution to confirm the level below.

A fail well below a level that passed earlier (beyond the knee's noise: `drift_band`), or one
that delivered well less than a lower passed level did, is not believed at once: the passed
level is measured again. Failing now with its throughput down
beyond the band, the target got slower during the search (`Drift`): the search ends without an
answer, as a lower level would only measure the drift. Failing otherwise, both fails count (the
knee's noise); passing, the low fail was a blip and the search goes on from that pass. Each
passed level is measured again so at most once.

The answer is the highest *confirmed* passing level, never an untested midpoint, with the
bracket [highest pass, lowest fail] around it. A level too short to decide (`stop_short`) ends
the search without one: no verdict below it would be better founded. Integer knobs (clients,
warehouses) round every level and never bisect below a step of one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

GROWTH = 2.0  # the bracketing factor
DRIFT_STEPS = 4  # a contradiction wider than this many resolutions is checked ...
DRIFT_FLOOR = 0.08  # ... and never narrower than this share


class Phase(StrEnum):
    BRACKET = "bracket"
    BISECT = "bisect"
    CONFIRM = "confirm"
    RECHECK = "recheck"  # a passed level measured again after a fail well below it
    DONE = "done"


@dataclass(frozen=True)
class Observation:
    level: float
    passed: bool
    phase: Phase


@dataclass(frozen=True)
class Drift:
    """What ended a search without an answer: `high` passed, then `low` failed (well below it,
    or delivering well less than it had), and `high`, measured again, failed with its throughput
    down beyond the band: the target got slower during the search (`kind` "slower")."""

    high: float
    low: float
    kind: str


@dataclass(frozen=True)
class CapacityAnswer:
    """What the search found: `capacity` None when no level passed (`floor_failed`), the
    bracket around it, and whether it stopped at the ceiling (the true capacity may be higher)."""

    capacity: float | None
    highest_pass: float | None
    lowest_fail: float | None
    at_ceiling: bool
    floor_failed: bool
    observations: tuple[Observation, ...]
    short_level: float | None = None  # the level too short to decide that ended the search
    drift: Drift | None = None  # the contradiction that ended the search
    exhausted: bool = False  # it ran its most levels without a confirmed answer

    @property
    def levels_run(self) -> int:
        return len(self.observations)


@dataclass
class CapacitySearch:
    """The search over one knob. `start`: the first level; `floor` and `ceiling` bound every
    level; `resolution`: the relative width the bracket narrows to (0.02: 2%); `confirm`: extra
    runs the answer must pass; `integer`: levels are whole numbers."""

    start: float
    floor: float
    ceiling: float
    resolution: float = 0.02
    confirm: int = 3
    integer: bool = False
    max_levels: int = 40  # a search that has not converged by then stops with what it has
    phase: Phase = Phase.BRACKET
    observations: list[Observation] = field(default_factory=list)
    _highest_pass: float | None = None
    _lowest_fail: float | None = None
    _confirmed: int = 0
    _next: float | None = None
    _at_ceiling: bool = False
    _short_level: float | None = None
    _recheck: tuple[float, float] | None = None  # (the passed level, the failed one below)
    _resume: Phase = Phase.BRACKET  # the phase a reconciled recheck returns to
    _drift: Drift | None = None
    _answered: bool = False  # the confirmations passed (or none were asked for)
    _exhausted: bool = False  # max_levels ran without an answer
    _rechecked: set[float] = field(default_factory=set)
    _achieved: dict[float, float] = field(default_factory=dict)  # each level's first passing

    def __post_init__(self) -> None:
        if not 0 < self.floor <= self.ceiling:
            raise ValueError("need 0 < floor <= ceiling")
        if self.resolution <= 0:
            raise ValueError("the resolution must be positive")
        self._next = self._clamp(self.start)

    # -- the interface -----------------------------------------------------------------------

    def next_level(self) -> float | None:
        """The level to run next, or None when the search is over."""
        if self.phase is Phase.DONE:
            return None
        if len(self.observations) >= self.max_levels:
            self.phase = Phase.DONE
            self._exhausted = True
            return None
        return self._next

    def observe(self, level: float, passed: bool, achieved: float | None = None) -> None:
        """The verdict of the level `next_level` gave, with the throughput it achieved (which
        tells a target that got slower from the knee's noise)."""
        self.observations.append(Observation(level, passed, self.phase))
        if passed and achieved is not None:
            self._achieved.setdefault(level, achieved)
        if self.phase is Phase.RECHECK:
            self._after_recheck(level, passed, achieved)
            return
        if not passed and (high := self._contradicted(level, achieved)) is not None:
            self._recheck, self._resume = (high, level), self.phase
            self._rechecked.add(high)
            self.phase, self._next = Phase.RECHECK, high
            return
        if self.phase is Phase.CONFIRM:
            self._after_confirmation(level, passed)
        else:
            self._record(level, passed)
            self._after_search_step(level, passed)

    def stop_short(self, level: float) -> None:
        """`level` gathered too few transactions to be judged at the longest measure: the
        search ends undecided (a lower level would gather fewer still)."""
        self.observations.append(Observation(level, False, self.phase))
        self._short_level = level
        self.phase = Phase.DONE

    def answer(self) -> CapacityAnswer:
        capacity = self._highest_pass if self._answered else None
        return CapacityAnswer(
            capacity=capacity,
            highest_pass=self._highest_pass,
            lowest_fail=self._lowest_fail,
            at_ceiling=capacity is not None
            and (capacity >= self.ceiling or (self._at_ceiling and capacity == self._highest_pass)),
            floor_failed=self._highest_pass is None
            and self._short_level is None
            and self._drift is None
            and not self._exhausted
            and self._lowest_fail is not None
            and self._lowest_fail <= self.floor,
            observations=tuple(self.observations),
            short_level=self._short_level,
            drift=self._drift,
            exhausted=self._exhausted,
        )

    # -- drift -------------------------------------------------------------------------------

    def drift_band(self, level: float) -> float:
        """The lowest passed level that contradicts a fail at `level` beyond the knee's noise."""
        wider = level * (1 + self._band_share())
        return max(wider, level + 2) if self.integer else wider

    def _band_share(self) -> float:
        return max(DRIFT_STEPS * self.resolution, DRIFT_FLOOR)

    def _contradicted(self, level: float, achieved: float | None) -> float | None:
        """The earlier pass a fail at `level` contradicts beyond the knee's noise, not measured
        again for that yet: the lowest passed well above it, or else the highest that delivered
        well more than it did (a target offered more delivers at least as much, unless it got
        slower). None: no contradiction."""
        passes = {o.level for o in self.observations[:-1] if o.passed} - self._rechecked
        above = [p for p in passes if p >= self.drift_band(level)]
        if above:
            return min(above)
        if achieved is None:
            return None
        share = 1 + self._band_share()
        delivered_more = [
            p for p in passes if p <= level and achieved * share < self._achieved.get(p, 0.0)
        ]
        return max(delivered_more) if delivered_more else None

    def _after_recheck(self, level: float, passed: bool, achieved: float | None) -> None:
        """The passed level measured again: failing with its throughput down beyond the band, the
        target got slower; failing otherwise, both fails count (the knee's noise); passing, the
        low level's fail was a blip and the search goes on from the pass."""
        assert self._recheck is not None
        low = self._recheck[1]
        before = self._achieved.get(level)
        self._recheck = None
        slower = (achieved is not None and before is not None
                  and achieved * (1 + self._band_share()) < before)  # fmt: skip
        if not passed and slower:
            self._drift = Drift(level, low, "slower")
            self.phase = Phase.DONE
            return
        self.phase = self._resume
        if passed:  # the low level's fail was a blip: the search goes on above it
            self.phase = Phase.BISECT if self.phase is Phase.CONFIRM else self.phase
            self._record(level, True)
            self._after_search_step(level, True)
        elif self.phase is Phase.CONFIRM:  # the knee's noise: both fails count
            self._record(level, False)
            self._after_confirmation(low, False)
        else:
            self._record(level, False)
            self._record(low, False)
            self._after_search_step(low, False)

    # -- the steps ---------------------------------------------------------------------------

    def _record(self, level: float, passed: bool) -> None:
        if passed and (self._highest_pass is None or level > self._highest_pass):
            self._highest_pass = level
        if not passed and (self._lowest_fail is None or level < self._lowest_fail):
            self._lowest_fail = level
        # A pass above a fail (noise at the knee): the fail above it bounds the search.
        if passed and self._lowest_fail is not None and level >= self._lowest_fail:
            self._lowest_fail = None
            higher = [o.level for o in self.observations if not o.passed and o.level > level]
            self._lowest_fail = min(higher) if higher else None

    def _after_search_step(self, level: float, passed: bool) -> None:
        lo, hi = self._highest_pass, self._lowest_fail
        if lo is None:  # nothing passed yet: go down
            lower = self._clamp(level / GROWTH)
            if level <= self.floor or lower >= level * (1 - self.resolution / 2):
                self.phase = Phase.DONE  # at the floor (as the caller rounds it)
                return
            self._next = lower
            return
        if hi is None:  # nothing failed above the highest pass: go up
            higher = self._clamp(lo * GROWTH)
            if lo >= self.ceiling or higher <= lo * (1 + self.resolution / 2):
                self._at_ceiling = True  # as the caller rounds it: nowhere higher to go
                self._start_confirming()
                return
            self._next = higher
            return
        self.phase = Phase.BISECT
        if self._narrow(lo, hi):
            self._start_confirming()
            return
        self._next = self._between(lo, hi)

    def _narrow(self, lo: float, hi: float) -> bool:
        if self.integer and hi - lo <= 1:
            return True
        return hi <= lo * (1 + self.resolution)

    def _between(self, lo: float, hi: float) -> float:
        middle = math.sqrt(lo * hi)
        if self.integer:
            middle = float(min(max(round(middle), lo + 1), hi - 1))
        return middle

    def _start_confirming(self) -> None:
        self.phase = Phase.CONFIRM
        self._confirmed = 0
        if self.confirm <= 0:
            self.phase, self._answered = Phase.DONE, True
            return
        self._next = self._highest_pass

    def _after_confirmation(self, level: float, passed: bool) -> None:
        if passed:
            self._confirmed += 1
            if self._confirmed >= self.confirm:
                self.phase, self._answered = Phase.DONE, True
            return
        # The level is not sustained after all: it bounds the search from above, and the level
        # one resolution step below is confirmed next (or searched, if nothing passed there).
        self._lowest_fail = level
        below = [o.level for o in self.observations if o.passed and o.level < level]
        step_down = self._clamp(level / (1 + self.resolution))
        if self.integer:
            step_down = self._clamp(level - 1)
        if step_down >= level:  # at the floor: nothing below to try
            self._highest_pass = None
            self.phase = Phase.DONE
            return
        self._highest_pass = max(below) if below else None
        if self._highest_pass is not None and self._highest_pass >= step_down:
            self._confirmed = 0
            self._next = self._highest_pass
            return
        self.phase = Phase.BISECT
        self._next = step_down

    def _clamp(self, level: float) -> float:
        value = min(max(level, self.floor), self.ceiling)
        return float(round(value)) if self.integer else value
