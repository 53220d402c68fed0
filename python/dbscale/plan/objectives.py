"""A capacity search's settings (`dbscale capacity`'s flags and a plan's `capacity:` section),
declared and checked once here. Latency objectives are written `p99<=20ms`, `p99.9<=100ms`,
`p50<=2ms`: an objective on the q-th percentile is the statement "at most (100 - q)% of
transactions take longer than the limit", which is what a level is judged on
(capacity/judge.py): the share of transactions over the limit against that allowance."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
            f"--slo {text!r} is not a latency objective",
            "write it as pQ<=LIMIT with a unit: p99<=20ms, p99.9<=100ms, p50<=500us",
        )
    percentile = float(found["q"])
    if not 0 < percentile < 100:
        raise ConfigError(
            f"--slo {text!r}: the percentile must be between 0 and 100 (not inclusive)",
            "p99<=20ms judges the 99th percentile",
        )
    limit_ms = float(found["value"]) * _TO_MS[found["unit"].lower()]
    if limit_ms <= 0:
        raise ConfigError(f"--slo {text!r}: the limit must be positive", "e.g. p99<=20ms")
    return Objective(percentile, limit_ms)


def parse_share(text: str, flag: str) -> float:
    """`0.1%` or `0.001` as a fraction (for --max-errors)."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ConfigError(f"{flag} {text!r} is not a share", "e.g. 0.1% or 0.001") from None
    if not 0 <= value < 1:
        raise ConfigError(f"{flag} {text!r} must be from 0 to under 100%", "e.g. 0.1%")
    return value


def parse_measure(text: str) -> tuple[float, float]:
    """`60s..5m` (the shortest and longest measure of a level) or one duration for both."""
    low, sep, high = text.partition("..")
    shortest = parse_duration(low, "--measure")
    longest = parse_duration(high, "--measure") if sep else shortest
    if longest < shortest:
        raise ConfigError(f"--measure {text!r}: the longest is shorter than the shortest",
                          "write it as SHORTEST..LONGEST, e.g. 30s..2m")  # fmt: skip
    return shortest, longest


def parse_resolution(text: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ConfigError(f"--resolution {text!r} is not a share", "e.g. 2%") from None
    if not 0.001 <= value <= 0.5:
        raise ConfigError(f"--resolution {text!r} must be from 0.1% to 50%", "e.g. 2%")
    return value


class Knob(StrEnum):
    RATE = "rate"  # the open model's offered rate, at the point's clients
    CLIENTS = "clients"  # closed-loop clients
    WAREHOUSES = "warehouses"  # TPC-C's active warehouses, a terminal each (tpccbench's knob)


@dataclass(frozen=True)
class CapacitySettings:
    """The search's settings, resolved: what the driver reads."""

    objectives: tuple[Objective, ...]
    max_errors: float = 0.001
    knob: Knob = Knob.RATE
    resolution: float = 0.02
    settle_s: float = 10.0
    measure_min_s: float = 30.0
    measure_max_s: float = 120.0
    confirm: int = 3

    @property
    def unit(self) -> str:
        return {Knob.RATE: "transactions/s", Knob.CLIENTS: "clients",
                Knob.WAREHOUSES: "warehouses"}[self.knob]  # fmt: skip


class CapacityPlan(BaseModel):
    """A plan's `capacity:` section (and `dbscale capacity`'s flags): each point of the study
    is searched for its capacity instead of being run `repeat` times."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    slo: list[str] = Field(min_length=1)
    max_errors: str = "0.1%"
    knob: Knob = Knob.RATE
    resolution: str = "2%"
    settle: str = "10s"
    measure: str = "30s..2m"
    confirm: int = Field(default=3, ge=0, le=20)

    @field_validator("slo", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("max_errors", "resolution", "settle", "measure", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    def settings(self) -> CapacitySettings:
        """Every value parsed; one `ConfigError` naming the flag for a bad one."""
        shortest, longest = parse_measure(self.measure)
        return CapacitySettings(
            objectives=tuple(parse_objective(s) for s in self.slo),
            max_errors=parse_share(self.max_errors, "--max-errors"), knob=self.knob,
            resolution=parse_resolution(self.resolution),
            settle_s=parse_duration(self.settle, "--settle"), measure_min_s=shortest,
            measure_max_s=longest, confirm=self.confirm,
        )  # fmt: skip
