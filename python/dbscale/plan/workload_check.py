"""A plan's workloads, parameters and parameter axes checked against the native workload
catalog (`_core.workloads()`), at run time, each refusal naming the plan's file and line.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from functools import partial
from typing import Any

from dbscale.errors import DbscaleError
from dbscale.plan.catalog import Catalog, WorkloadInfo
from dbscale.plan.document import PathKey, PlanLocator
from dbscale.plan.matrix import Matrix
from dbscale.plan.schema import LOAD_FIELDS, PlanSchema


def check_workloads(
    locator: PlanLocator, plan: PlanSchema, matrix: Matrix, catalog: Catalog
) -> dict[str, WorkloadInfo]:
    """Workload names, their parameters and parameter axes, against the native catalog."""
    infos: dict[str, WorkloadInfo] = {}
    many = plan.workloads is not None
    for i, entry in enumerate(plan.workload_entries()):
        at: PathKey = ("workloads", i) if many else ("workload",)
        info = _located(locator, (*at, "name"), partial(catalog.resolve, entry.name))
        for key, value in entry.params.items():
            _check_param(locator, (*at, "params", key), info, key, value)
        for axis in matrix.axes:
            if axis.kind == "param" and axis.name not in info.params:
                known = [*LOAD_FIELDS, "target", "workload", *info.params]
                close = difflib.get_close_matches(axis.name, known, n=1)
                raise locator.error(
                    axis.path,
                    f"unknown axis {axis.name!r}: not a load setting, target, workload or a "
                    f"parameter of {info.name}",
                    (f"did you mean {close[0]!r}? " if close else "")
                    + f"axes: {', '.join(LOAD_FIELDS)}, target, workload, or one of "
                    f"{info.name}'s parameters ({', '.join(info.params)})",
                )
        infos[entry.display] = info
    warmup = plan.prepare.warmup
    if warmup is not None and warmup.workload is not None:
        info = _located(
            locator,
            ("prepare", "warmup", "workload"),
            lambda: catalog.resolve(warmup.workload or ""),
        )
        for key, value in (warmup.params or {}).items():
            _check_param(locator, ("prepare", "warmup", "params", key), info, key, value)
    return infos


def _located(
    locator: PlanLocator, path: PathKey, resolve: Callable[[], WorkloadInfo]
) -> WorkloadInfo:
    try:
        return resolve()
    except DbscaleError as exc:
        raise locator.error(path, exc.message, exc.hint) from None


def _check_param(
    locator: PlanLocator, path: PathKey, info: WorkloadInfo, key: str, value: Any
) -> None:
    if key not in info.params:
        _located(locator, path, lambda: _raise_param(info, key))
    default = info.params[key].default
    if value is None or default is None:
        return
    expected: tuple[type, ...] = (
        (bool,) if isinstance(default, bool) else
        (int,) if isinstance(default, int) else
        (int, float) if isinstance(default, float) else (str,)
    )  # fmt: skip
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        raise locator.error(
            path,
            f"parameter {key} of {info.name} takes a {expected[-1].__name__}, got {value!r}",
            "`dbscale workloads` lists each parameter with its default",
        )


def _raise_param(info: WorkloadInfo, key: str) -> WorkloadInfo:
    Catalog({info.name: info}).check_params(info, {key: None})
    return info
