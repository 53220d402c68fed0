"""A target in several shapes, one target per shape: a target whose `vcpus` (or `memory_gib`,
`instance_type`) is a list becomes one target per shape (`NAME-2vcpu`, ...) in one `group`, so a
study steps through the sizes by itself, leaving one shape (teardown) before entering the next;
and the groups a study must run as blocks."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from dbscale.errors import PlanError
from dbscale.targets.spec import LocalSettings, TargetProfile
from dbscale.targets.variables import fill, target_variables
from dbscale.values import JsonObject


def shared_groups(targets: Iterable[TargetProfile]) -> set[str]:
    """The exclusive groups more than one of `targets` belongs to: a study runs each of those
    targets in a block of its own, so it enters each once."""
    names: dict[str, set[str]] = {}
    for target in targets:
        group = target.exclusive_group
        if group is not None:
            names.setdefault(group, set()).add(str(getattr(target, "name", "")))
    return {group for group, members in names.items() if len(members) > 1}


T = TypeVar("T", bound=TargetProfile)


def expand_sizes(targets: Sequence[T]) -> list[T]:
    """One target per size of each target with size lists; names `NAME-Nvcpu` (or the instance
    type), group NAME; a `local` directory is shared, so data loaded once serves every size."""
    out: list[T] = []
    for target in targets:
        lists = target._size_lists()
        if not lists:
            out.append(target)
            continue
        count = len(next(iter(lists.values())))
        name = str(getattr(target, "name", "target"))
        for i in range(count):
            update: JsonObject = {k: v[i] for k, v in lists.items()}
            label = (
                f"{update['vcpus']}vcpu"
                if "vcpus" in update
                else str(update.get("instance_type", ""))
            )
            if "nodes" in update:
                label = f"{update['nodes']}x{label}" if "vcpus" in update else f"{update['nodes']}n"
            update["name"] = re.sub(r"[^A-Za-z0-9_.+-]", "-", f"{name}-{label}")
            update["group"] = target.group or name
            if target.is_local:
                local = target.local or LocalSettings()
                update["local"] = local.model_copy(update={"dir": local.dir or name})
            out.append(target.model_copy(update=update))
    names = [str(getattr(t, "name", "")) for t in out]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise PlanError(
            f"target names collide after expanding sizes: {', '.join(clash)}",
            "rename the target whose name ends like a size (NAME-Nvcpu)",
        )
    return [_with_instance_type(t) for t in out]


def _with_instance_type(target: T) -> T:
    if not isinstance(target.instance_type, str) or "{" not in target.instance_type:
        return target
    filled = fill(target.instance_type, target_variables(target), "instance_type")
    return target.model_copy(update={"instance_type": filled})
