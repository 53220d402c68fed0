"""Values as people write and read them: durations (`30s`, `2m`, `500ms`, `1m30s`), client lists
(`1,4,8`), `--set key=value` pairs, axis values in point keys, and UTC timestamps. Each parser
raises `ConfigError` naming the option and the bad value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from dbscale.errors import ConfigError

_UNIT_S = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
# Digits are ASCII digits only (re.ASCII): `\d` would take any script's, and `int("٣")` is 3.
# A duration's parts may have an exponent (`1e9ms` as `1000000000ms`).
_NUMBER_TEXT = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_DURATION_PART = re.compile(
    rf"({_NUMBER_TEXT})\s*(ms|sec|min|s|m|h)(?![a-z])", re.IGNORECASE | re.ASCII
)
_NUMBER = re.compile(_NUMBER_TEXT, re.ASCII)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*", re.ASCII)
_INT = re.compile(r"[+-]?\d+", re.ASCII)
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", re.ASCII)

ParamValue = int | float | bool | str
AxisValue = ParamValue | None  # a matrix axis's value: a parameter's, or a load setting's (None)
# A free-form JSON object (facts, record sections, documents): names to values that are read
# with a check of their type, never assumed.
JsonObject = dict[str, object]


def json_object(value: object) -> JsonObject:
    """`value` when it is a JSON object, else an empty one (a section a record lacks)."""
    return value if isinstance(value, dict) else {}


def parse_duration(text: str, option: str = "--duration") -> float:
    """Seconds in `text`: a bare number is seconds; units ms, s, m, h combine (`1m30s`)."""
    raw = text.strip()
    hint = "write a duration like 30s, 2m, 500ms or 1m30s (a bare number means seconds)"
    if not raw:
        raise ConfigError(f"{option}: empty duration", hint)
    if _NUMBER.fullmatch(raw):
        seconds = float(raw)
    else:
        pos = 0
        seconds = 0.0
        previous_unit = math.inf  # each unit once, larger first: `1h30m`, never `1h1h`
        for match in _DURATION_PART.finditer(raw):
            if raw[pos : match.start()].strip():
                break
            unit = _UNIT_S[match.group(2).lower()]
            if unit >= previous_unit:
                raise ConfigError(
                    f"{option}: {text!r} repeats a unit or puts a smaller one first", hint
                )
            previous_unit = unit
            seconds += float(match.group(1)) * unit
            pos = match.end()
        if pos == 0 or raw[pos:].strip():
            raise ConfigError(f"{option}: {text!r} is not a duration", hint)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{option}: duration must be positive, got {text!r}", hint)
    return seconds


def format_duration(seconds: float) -> str:
    """Short human form, the inverse of `parse_duration` for display."""
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds < 120 or seconds % 60:
        return f"{seconds:g}s"
    return f"{seconds / 60:g}m"


def format_eta(seconds: float) -> str:
    """A wall time to wait for: `45s`, `12m05s`, `3h20m`."""
    whole = max(round(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def parse_clients(values: Iterable[str]) -> list[int]:
    """`-c 1,4,8` (or repeated `-c`) into client levels, in the order given, each at least 1."""
    levels: list[int] = []
    hint = "give a positive number of clients, or a comma list like 1,4,8"
    for value in values:
        for item in value.split(","):
            token = item.strip()
            if not token:
                raise ConfigError(f"--clients: empty item in {value!r}", hint)
            if not _INT.fullmatch(token):
                raise ConfigError(f"--clients: {token!r} is not a whole number", hint)
            n = int(token)
            if n < 1:
                raise ConfigError(f"--clients must be at least 1, got {n}", hint)
            levels.append(n)
    return levels


def parse_param_value(text: str) -> ParamValue:
    """A `--set` value: int, then float, then true/false, else the string itself."""
    stripped = text.strip()
    if _INT.fullmatch(stripped):
        return int(stripped)
    if _FLOAT.fullmatch(stripped):
        return float(stripped)
    lowered = stripped.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    return text


def parse_set(pairs: Iterable[str]) -> dict[str, ParamValue]:
    """`--set key=value` (repeatable) into workload parameters. Later keys win; `-` in a key is
    read as `_` so `foreign-keys` and `foreign_keys` are the same parameter."""
    params: dict[str, ParamValue] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ConfigError(
                f"--set {pair!r} is not key=value",
                "write --set key=value, e.g. --set scale=10; `dbscale workloads` lists the keys",
            )
        if not _KEY.fullmatch(key):
            raise ConfigError(
                f"--set: {key!r} is not a parameter name",
                "parameter names are letters, digits and _; `dbscale workloads` lists them",
            )
        params[key] = parse_param_value(value)
    return params


def format_value(value: Any, axis: str | None = None) -> str:
    """How a value appears in point keys and tables."""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    if axis == "duration" and isinstance(value, float):
        return format_duration(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def point_key(values: Mapping[str, AxisValue]) -> str:
    """`clients=8,tls=require`: the axis values, in axis order; `default` without axes."""
    if not values:
        return "default"
    return ",".join(f"{name}={format_value(value, name)}" for name, value in values.items())


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def seconds_validator(what: str, example: str) -> Callable[[Any], Any]:
    """A pydantic before-validator for a time: a number of seconds, or `30s`, `2m`, `500ms`;
    `what` names it in the message, `example` shows good values."""

    def validate(value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return parse_duration(value, what)
            except ConfigError as exc:
                raise ValueError(exc.message.removeprefix(f"{what}: ")) from None
        raise ValueError(f"must be a duration like {example}")

    return validate


def parse_cpu_list(text: str) -> list[int]:
    """A kernel CPU list such as `0-3,8,10-11`."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


def duration_seconds(value: Any) -> Any:
    """A pydantic before-validator: `30s`, `2m`, `500ms`, or a number of seconds."""
    if isinstance(value, bool):
        raise ValueError("must be a duration like 30s, 2m or 500ms")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return parse_duration(value, "duration")
        except ConfigError as exc:
            raise ValueError(f"{exc.message.removeprefix('duration: ')}: {exc.hint}") from None
    raise ValueError("must be a duration like 30s, 2m or 500ms")


def is_zero_duration(value: Any) -> bool:
    """`0`, `"0"`, `"0s"` or `"0ms"`: none of it (no cooldown, no warm-up run, no ramp)."""
    if isinstance(value, str):
        value = value.strip().lower()
    return value in (0, "0", "0s", "0ms")


def zero_or_duration_seconds(value: Any) -> Any:
    """`duration_seconds`, with zero allowed."""
    if is_zero_duration(value):
        return 0.0
    return duration_seconds(value)
