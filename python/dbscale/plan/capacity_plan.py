"""A plan's `capacity:` section, which `dbscale capacity`'s flags also fill: each point of the
study is searched for its capacity instead of being run `repeat` times. The defaults are
objectives.py's; every value is checked once, in `settings()`, naming its flag."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dbscale.errors import ConfigError, HintedValueError
from dbscale.plan.objectives import (
    DEFAULT_CONFIRM,
    DEFAULT_KNOB,
    DEFAULT_MAX_ERRORS,
    DEFAULT_MEASURE,
    DEFAULT_RATE_CLIENTS,
    DEFAULT_RESOLUTION,
    DEFAULT_SETTLE,
    MAX_CONFIRM,
    CapacitySettings,
    Knob,
    parse_measure,
    parse_objective,
    parse_share,
)
from dbscale.values import parse_duration


class CapacityPlan(BaseModel):
    """A plan's `capacity:` section (and `dbscale capacity`'s flags)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    slo: list[str]  # an empty list is refused with a hint (a missing one too)
    max_errors: str = DEFAULT_MAX_ERRORS
    knob: Knob = Knob(DEFAULT_KNOB)
    resolution: str = DEFAULT_RESOLUTION
    settle: str = DEFAULT_SETTLE
    measure: str = DEFAULT_MEASURE
    confirm: int = Field(default=DEFAULT_CONFIRM, ge=0, le=MAX_CONFIRM)

    @field_validator("slo", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("max_errors", "resolution", "settle", "measure", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("knob", mode="before")
    @classmethod
    def _knob(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in {k.value for k in Knob}:
            return value.strip().lower()
        raise HintedValueError(
            f"{value!r} is not rate, clients, warehouses or analytic_streams",
            "rate: the open model's offered rate; clients: closed-loop clients; warehouses: "
            "TPC-C's active warehouses; analytic_streams: CH-benCHmark's analytic streams beside "
            "its terminals",
        )

    @field_validator("slo")
    @classmethod
    def _objectives(cls, value: list[str]) -> list[str]:
        if not value:
            raise HintedValueError(
                "a capacity search needs a latency objective",
                "give --slo 'p99<=20ms' (repeatable), or capacity.slo in a plan",
            )
        for text in value:
            _checked(partial(parse_objective, text))
        return value

    @field_validator("max_errors")
    @classmethod
    def _max_errors(cls, value: str) -> str:
        _checked(lambda: parse_share(value, 0.0, 1.0, "0.1% or 0.001"))
        return value

    @field_validator("resolution")
    @classmethod
    def _resolution(cls, value: str) -> str:
        _checked(lambda: parse_share(value, 0.001, 0.5, "2%"))
        return value

    @field_validator("settle")
    @classmethod
    def _settle(cls, value: str) -> str:
        _checked(lambda: parse_duration(value, "settle"), prefix="settle: ")
        return value

    @field_validator("measure")
    @classmethod
    def _measure(cls, value: str) -> str:
        _checked(lambda: parse_measure(value))
        return value

    def settings(self) -> CapacitySettings:
        """Every value parsed (each was checked when the plan was validated)."""
        shortest, longest = parse_measure(self.measure)
        return CapacitySettings(
            objectives=tuple(parse_objective(s) for s in self.slo),
            max_errors=parse_share(self.max_errors, 0.0, 1.0, ""), knob=self.knob,
            resolution=parse_share(self.resolution, 0.001, 0.5, ""),
            settle_s=parse_duration(self.settle, "settle"), measure_min_s=shortest,
            measure_max_s=longest, confirm=self.confirm,
        )  # fmt: skip

    def default_clients(self) -> int:
        """Connections when none are given: an open-model search's, or 1 to start from."""
        return DEFAULT_RATE_CLIENTS if self.knob is Knob.RATE else 1


def _checked(parse: Callable[[], object], prefix: str = "") -> None:
    """Runs a parser for its refusal, which becomes the field's validation error with its hint
    (the plan's validation names the field's flag or file line; `prefix`: the parser's own
    naming of it, dropped)."""
    try:
        parse()
    except ConfigError as exc:
        raise HintedValueError(exc.message.removeprefix(prefix), exc.hint) from None
