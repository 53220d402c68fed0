"""Which facts a study swept: its axes. A fact is an axis when it differs between measured runs;
it is *swept* unless it is a function of the axes before it (threads follow clients when only
clients were given; a target name follows its vCPU count when each target has its own), in which
case the report shows it beside the point but draws no chart against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbscale.report.facts import FACT_ORDER, PARAM_PREFIX, PLAN_PREFIX, Value, fact_title


@dataclass(frozen=True)
class Axis:
    key: str
    title: str
    values: tuple[Value, ...]
    numeric: bool
    swept: bool = True

    def format(self, value: Value) -> str:
        return format_value(value, self.key)


def format_value(value: Value, key: str = "") -> str:
    if value is None:
        return "closed loop" if key == "rate_tps" else "default"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def candidate_keys(facts: Sequence[Mapping[str, Value]]) -> list[str]:
    """Plan axes first (their order), then the built-in facts, then workload parameters."""
    seen: dict[str, None] = {}
    for run in facts:
        for key in run:
            if key.startswith(PLAN_PREFIX):
                seen.setdefault(key)
    for key in FACT_ORDER:
        seen.setdefault(key)
    params = sorted({k for run in facts for k in run if k.startswith(PARAM_PREFIX)})
    for key in params:
        seen.setdefault(key)
    return list(seen)


def detect_axes(facts: Sequence[Mapping[str, Value]]) -> list[Axis]:
    """The varying facts of `facts` (one mapping per measured run), swept ones marked."""
    axes: list[Axis] = []
    swept: list[str] = []
    for key in candidate_keys(facts):
        values = _distinct([run.get(key) for run in facts])
        if len(values) < 2:
            continue
        dependent = bool(swept) and _is_function_of(facts, swept, key)
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        ordered = tuple(sorted(values, key=_numeric_key)) if numeric else tuple(values)
        axes.append(Axis(key, fact_title(key), ordered, numeric, swept=not dependent))
        if not dependent:
            swept.append(key)
    return axes


def _distinct(values: Sequence[Value]) -> list[Value]:
    out: list[Value] = []
    for value in values:
        if not any(_same(value, seen) for seen in out):
            out.append(value)
    return out


def _same(a: Value, b: Value) -> bool:
    # True == 1 in Python; an axis value of True is not the number 1.
    return (type(a) is type(b) and a == b) or (
        _is_number(a) and _is_number(b) and float(a) == float(b)  # type: ignore[arg-type]
    )


def _is_number(value: Value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numeric_key(value: Value) -> float:
    return float(value) if _is_number(value) else 0.0  # type: ignore[arg-type]


def _is_function_of(facts: Sequence[Mapping[str, Value]], keys: Sequence[str], key: str) -> bool:
    seen: dict[tuple[str, ...], Value] = {}
    for run in facts:
        group = tuple(repr(run.get(k)) for k in keys)
        value = run.get(key)
        if group in seen and not _same(seen[group], value):
            return False
        seen.setdefault(group, value)
    return True


def point_key(run: Mapping[str, Value], axes: Sequence[Axis]) -> tuple[str, ...]:
    """Runs with equal swept-axis values are repetitions of one point."""
    return tuple(repr(run.get(axis.key)) for axis in axes if axis.swept)
