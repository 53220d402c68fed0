"""The matrix of a plan: axes over load settings, workload parameters, targets and workloads;
their full cartesian product, `zip` groups that vary together, and `exclude` rules. Every value is
validated where it is written, so a bad one is reported with its file and line.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from dbscale.errors import PlanError
from dbscale.plan.document import PathKey, PlanLocator
from dbscale.plan.faults import FAULT_AXIS, scenarios
from dbscale.plan.schema import LOAD_FIELD_BY_NAME, LOAD_FIELDS, LoadSettings, PlanSchema
from dbscale.values import AxisValue

RESERVED = ("zip", "exclude")
TARGET_AXIS = "target"
WORKLOAD_AXIS = "workload"
MAX_POINTS = 10_000  # at a second a run, a day and more: past it, a plan is a mistake


@dataclass(frozen=True)
class Axis:
    """One varying setting. `kind`: load, param, target or workload."""

    name: str
    kind: str
    path: PathKey  # where it is declared, for messages

    @property
    def field(self) -> str:
        return self.name


@dataclass(frozen=True)
class Factor:
    """An independent dimension of the product: one axis, or a zip group of axes."""

    axes: tuple[Axis, ...]
    rows: tuple[tuple[AxisValue, ...], ...]


@dataclass(frozen=True)
class Matrix:
    factors: tuple[Factor, ...]
    excludes: tuple[tuple[dict[str, list[AxisValue]], PathKey], ...]

    @property
    def axes(self) -> list[Axis]:
        return [axis for factor in self.factors for axis in factor.axes]

    def points(self) -> list[dict[str, AxisValue]]:
        """Every combination, first axis slowest, minus the excluded ones; refused before it
        is expanded when there would be more than MAX_POINTS."""
        count = math.prod(len(factor.rows) for factor in self.factors)
        if count > MAX_POINTS:
            sizes = " x ".join(str(len(factor.rows)) for factor in self.factors)
            raise PlanError(
                f"the matrix has {count:,} points ({sizes}), over the {MAX_POINTS:,} a study may "
                "have",
                "sweep fewer values per axis, or split the study into several plans",
            )
        points: list[dict[str, AxisValue]] = []
        for combo in itertools.product(*(factor.rows for factor in self.factors)):
            values: dict[str, AxisValue] = {}
            for factor, row in zip(self.factors, combo, strict=True):
                for axis, value in zip(factor.axes, row, strict=True):
                    values[axis.name] = value
            if not any(_matches(values, rule) for rule, _ in self.excludes):
                points.append(values)
        return points


def _matches(values: dict[str, AxisValue], rule: dict[str, list[AxisValue]]) -> bool:
    return all(values.get(name) in allowed for name, allowed in rule.items())


def parse_matrix(locator: PlanLocator, plan: PlanSchema) -> Matrix:
    raw = plan.matrix
    if "matrix" in locator.sections and not raw:
        raise locator.error(("matrix",), "empty matrix", "give at least one axis, or drop `matrix`")
    targets = [t.name for t in plan.targets_or_embedded()]
    workloads = [w.display for w in plan.workload_entries()]
    if len(set(workloads)) != len(workloads):
        raise locator.error(("workloads",), "two workloads have the same name; give them `label`s")
    faults = list(scenarios(plan.faults)) if isinstance(plan.faults, dict) else []
    parser = _AxisParser(locator, targets, workloads, faults)
    factors: list[Factor] = []
    declared: set[str] = set()
    for name, values in raw.items():
        if name in RESERVED:
            continue
        axis = parser.axis(name, ("matrix", name))
        _claim(locator, declared, axis)
        factors.append(Factor((axis,), tuple((v,) for v in parser.values(axis, values))))
    zipped = raw.get("zip")
    if zipped is not None:
        groups = zipped if isinstance(zipped, list) else [zipped]
        for g, group in enumerate(groups):
            path: PathKey = ("matrix", "zip", g) if isinstance(zipped, list) else ("matrix", "zip")
            factors.append(_zip_factor(locator, parser, group, path, declared))
    for name, names in ((FAULT_AXIS, faults), (WORKLOAD_AXIS, workloads), (TARGET_AXIS, targets)):
        if name not in declared and len(names) > 1:
            axis = Axis(name, name, (f"{name}s",) if name != FAULT_AXIS else (FAULT_AXIS,))
            factors.insert(0, Factor((axis,), tuple((n,) for n in names)))
            declared.add(name)
    excludes = _excludes(
        locator, parser, raw.get("exclude"), {a.name: a for f in factors for a in f.axes}
    )
    matrix = Matrix(tuple(factors), excludes)
    if not matrix.points():
        raise locator.error(("matrix", "exclude"), "the excludes leave no point to run")
    return matrix


def _claim(locator: PlanLocator, declared: set[str], axis: Axis) -> None:
    if axis.name in declared:
        raise locator.error(axis.path, f"axis {axis.name!r} is declared twice")
    declared.add(axis.name)


def _zip_factor(
    locator: PlanLocator, parser: _AxisParser, group: Any, path: PathKey, declared: set[str]
) -> Factor:
    if not isinstance(group, dict) or len(group) < 2:
        raise locator.error(
            path,
            "a zip group maps two or more axes to lists of equal length",
            "e.g. zip: [{connect: [persistent, per-transaction], tls: [disable, require]}]",
        )
    axes: list[Axis] = []
    columns: list[list[AxisValue]] = []
    for name, values in group.items():
        axis = parser.axis(name, (*path, name))
        _claim(locator, declared, axis)
        axes.append(axis)
        columns.append(parser.values(axis, values, unique=False))
    lengths = {len(c) for c in columns}
    if len(lengths) != 1:
        raise locator.error(path, f"zipped axes need lists of equal length, got {sorted(lengths)}")
    rows = tuple(zip(*columns, strict=True))
    if len({repr(r) for r in rows}) != len(rows):
        raise locator.error(path, "a zip group repeats a combination of values")
    return Factor(tuple(axes), rows)


def _excludes(
    locator: PlanLocator, parser: _AxisParser, raw: Any, axes: dict[str, Axis]
) -> tuple[tuple[dict[str, list[AxisValue]], PathKey], ...]:
    if raw is None:
        return ()
    rules = raw if isinstance(raw, list) else [raw]
    parsed: list[tuple[dict[str, list[AxisValue]], PathKey]] = []
    for i, rule in enumerate(rules):
        path: PathKey = ("matrix", "exclude", i) if isinstance(raw, list) else ("matrix", "exclude")
        if not isinstance(rule, dict) or not rule:
            raise locator.error(path, "an exclude rule maps axes to values, e.g. {transport: unix}")
        matcher: dict[str, list[AxisValue]] = {}
        for name, values in rule.items():
            key = name.removeprefix("params.")
            if key not in axes:
                raise locator.error(
                    (*path, name),
                    f"exclude names {name!r}, which is not an axis of the matrix",
                    f"the axes are: {', '.join(axes) or 'none'}",
                )
            matcher[key] = parser.values(axes[key], values, path=(*path, name), unique=False)
        parsed.append((matcher, path))
    return tuple(parsed)


class _AxisParser:
    def __init__(
        self,
        locator: PlanLocator,
        targets: Sequence[str],
        workloads: Sequence[str],
        faults: Sequence[str] = (),
    ):
        self.locator, self.targets, self.workloads = locator, list(targets), list(workloads)
        self.faults = list(faults)

    def axis(self, name: Any, path: PathKey) -> Axis:
        if not isinstance(name, str) or not name:
            raise self.locator.error(path, "an axis name must be a word")
        if name in LOAD_FIELDS:
            return Axis(name, "load", path)
        if name in (TARGET_AXIS, WORKLOAD_AXIS):
            return Axis(name, name, path)
        if name == FAULT_AXIS:
            if not self.faults:
                raise self.locator.error(
                    path,
                    "the faults axis picks scenarios by name from the plan's `faults:` mapping",
                    "e.g. faults: {none: [], kill-n2: [{at: 10s, kill: n2}]}",
                )
            return Axis(name, name, path)
        if name in ("targets", "workloads"):
            return Axis(name[:-1], name[:-1], path)
        bare = name.removeprefix("params.")
        if bare and "." not in bare:
            return Axis(bare, "param", path)  # checked against the workload catalog later
        raise self.locator.error(path, f"unknown axis {name!r}", _AXES_HINT)

    def values(
        self, axis: Axis, raw: Any, path: PathKey | None = None, *, unique: bool = True
    ) -> list[AxisValue]:
        path = path or axis.path
        items = raw if isinstance(raw, list) else [raw]
        if not items:
            raise self.locator.error(path, f"axis {axis.name!r} has no values", "give at least one")
        out: list[AxisValue] = []
        for i, item in enumerate(items):
            item_path = (*path, i) if isinstance(raw, list) else path
            out.append(self.value(axis, item, item_path))
        if unique and len({repr(v) for v in out}) != len(out):
            raise self.locator.error(path, f"axis {axis.name!r} repeats a value")
        return out

    def value(self, axis: Axis, item: Any, path: PathKey) -> AxisValue:
        if axis.kind == "load":
            try:
                field = LOAD_FIELD_BY_NAME[axis.name]
                setting: AxisValue = getattr(LoadSettings.model_validate({axis.name: item}), field)
                return setting
            except ValidationError as exc:
                msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
                raise self.locator.error(path, f"{axis.name}: {msg}, got {item!r}") from None
        if axis.kind in (TARGET_AXIS, WORKLOAD_AXIS, FAULT_AXIS):
            known = {
                TARGET_AXIS: self.targets,
                WORKLOAD_AXIS: self.workloads,
                FAULT_AXIS: self.faults,
            }[axis.kind]
            if item not in known:
                raise self.locator.error(
                    path, f"no {axis.kind} named {item!r}; known: {', '.join(known)}"
                )
            return str(item)
        if isinstance(item, bool | int | float | str):
            return item
        raise self.locator.error(
            path, f"a workload parameter must be a number, word or boolean, got {item!r}"
        )


_AXES_HINT = (
    f"axes are load settings ({', '.join(LOAD_FIELDS)}), target, workload, faults, or a workload "
    "parameter (scale, table_size, ... as `dbscale workloads` lists them)"
)
