"""Latency objectives as `--slo` gives them: `p99<=20ms`, `p99.9<=100ms`, `p50<=2ms`. An objective
on the q-th percentile is the statement "at most (100 - q)% of transactions take longer than the
limit", which is what a level is judged on (judge.py): the share of transactions over the limit
against that allowance."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbscale.errors import ConfigError

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
