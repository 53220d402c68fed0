"""A capacity search's settings, parsed: latency objectives, shares, measures, the knob, each
default declared once here (the plan model `capacity_plan.CapacityPlan` and the command line's
help both read them; this module stays light for the command line). Latency objectives are
written `p99<=20ms`, `p99.9<=100ms`, `p50<=2ms`: an objective on the q-th percentile is the
statement "at most (100 - q)% of transactions take longer than the limit", which is what a level
is judged on (capacity/judge.py): the share of transactions over the limit against that
allowance."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum

from dbscale.errors import ConfigError
from dbscale.values import parse_duration

_SLO = re.compile(
    r"^\s*p(?P<q>\d+(?:\.\d+)?)\s*(?:<=|<)\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>us|µs|ms|s)\s*$",
    re.IGNORECASE,
)
_TO_MS = {"us": 0.001, "µs": 0.001, "ms": 1.0, "s": 1000.0}
# Transactions over the limit a level must expect before its share is believed: about 50, so a
# p99 objective needs 5,000 transactions and a p99.9 one 50,000.
EXCEEDANCES_NEEDED = 50

# Each setting's default, as the plan and `dbscale capacity --help` state it.
DEFAULT_MAX_ERRORS = "0.1%"
DEFAULT_KNOB = "rate"
DEFAULT_RESOLUTION = "2%"
DEFAULT_SETTLE = "10s"
DEFAULT_MEASURE = "30s..2m"
DEFAULT_CONFIRM = 3
MAX_CONFIRM = 20
# A search's connections when none are given: an open-model search offers its rates over 16;
# a closed-loop (clients or warehouses) search starts from 1.
DEFAULT_RATE_CLIENTS = 16


@dataclass(frozen=True)
class Objective:
    """`percentile` (99.0) of latency at most `limit_ms`."""

    percentile: float
    limit_ms: float

    @property
    def allowance(self) -> float:
        """The share of transactions that may be over the limit: 0.01 for p99."""
        return 1.0 - self.percentile / 100.0

    @property
    def samples_needed(self) -> int:
        return round(EXCEEDANCES_NEEDED / self.allowance)

    @property
    def text(self) -> str:
        if self.limit_ms >= 1000 and (self.limit_ms / 1000).is_integer():
            return f"p{self.percentile:g}<={self.limit_ms / 1000:g}s"
        return f"p{self.percentile:g}<={self.limit_ms:g}ms"


def parse_objective(text: str) -> Objective:
    """`p99<=20ms` as an Objective; one clear error for anything else."""
    found = _SLO.match(text)
    if found is None:
        raise ConfigError(
            f"{text!r} is not a latency objective",
            "write it as pQ<=LIMIT with a unit: p99<=20ms, p99.9<=100ms, p50<=500us",
        )
    percentile = float(found["q"])
    if not 0 < percentile < 100:
        raise ConfigError(
            f"{text!r}: the percentile must be between 0 and 100 (not inclusive)",
            "p99<=20ms judges the 99th percentile",
        )
    limit_ms = float(found["value"]) * _TO_MS[found["unit"].lower()]
    if limit_ms <= 0:
        raise ConfigError(f"{text!r}: the limit must be positive", "e.g. p99<=20ms")
    return Objective(percentile, limit_ms)


def parse_share(text: str, low: float, high: float, example: str) -> float:
    """`0.1%` or `0.001` as a fraction from `low` to under `high` (`high` itself allowed
    when it is under 1)."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ConfigError(f"{text!r} is not a share", f"e.g. {example}") from None
    if not (low <= value <= high and value < 1) or math.isnan(value):
        raise ConfigError(f"{text!r} must be from {low:.1%} to {'under ' if high >= 1 else ''}"
                          f"{min(high, 1):.0%}", f"e.g. {example}")  # fmt: skip
    return value


def parse_measure(text: str) -> tuple[float, float]:
    """`60s..5m` (the shortest and longest measure of a level) or one duration for both."""
    low, sep, high = text.partition("..")
    try:
        shortest = parse_duration(low, "measure")
        longest = parse_duration(high, "measure") if sep else shortest
    except ConfigError as exc:
        raise ConfigError(exc.message.removeprefix("measure: "), exc.hint) from None
    if longest < shortest:
        raise ConfigError(f"{text!r}: the longest is shorter than the shortest",
                          "write it as SHORTEST..LONGEST, e.g. 30s..2m")  # fmt: skip
    return shortest, longest


class Knob(StrEnum):
    RATE = "rate"  # the open model's offered rate, at the point's clients
    CLIENTS = "clients"  # closed-loop clients
    WAREHOUSES = "warehouses"  # TPC-C's active warehouses, a terminal each (tpccbench's knob)
    ANALYTIC_STREAMS = "analytic_streams"  # CH-benCHmark's streams, judged on the terminals


@dataclass(frozen=True)
class CapacitySettings:
    """The search's settings, resolved (by `CapacityPlan.settings`): what the driver reads."""

    objectives: tuple[Objective, ...]
    max_errors: float
    knob: Knob
    resolution: float
    settle_s: float
    measure_min_s: float
    measure_max_s: float
    confirm: int

    @property
    def unit(self) -> str:
        return {Knob.RATE: "transactions/s", Knob.CLIENTS: "clients",
                Knob.WAREHOUSES: "warehouses",
                Knob.ANALYTIC_STREAMS: "analytic streams"}[self.knob]  # fmt: skip
