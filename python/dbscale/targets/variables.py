"""The `{field}` variables of a target: what its hooks (and a templated `instance_type`) may
use, also exported to hooks as `DBSCALE_TARGET_<FIELD>` environment variables. A variable the
target does not set is a plan error, found before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dbscale.errors import PlanError
from dbscale.redaction import redact_url

if TYPE_CHECKING:
    from dbscale.targets.spec import TargetProfile

HOOK_NAMES = ("setup", "ready", "teardown")
# `{vcpus}`, but not the shell's `${HOME}`; `{{` and `}}` stand for `{` and `}`.
_VARIABLE = re.compile(r"\{\{|\}\}|(?<!\$)\{([a-z][a-z0-9_]*)\}")


def target_variables(target: TargetProfile) -> dict[str, str]:
    """The `{name}` variables of hooks and instance types: every field the target sets."""
    memory = target.memory
    values: dict[str, str | int | float | None] = {
        "name": getattr(target, "name", None),
        "group": target.group,
        "url": redact_url(str(getattr(target, "url", ""))),
        "provider": target.provider,
        "service": target.service,
        "region": target.region,
        "zone": target.zone,
        "instance_type": target.instance_type if isinstance(target.instance_type, str) else None,
        "vcpus": target.vcpu_count,
        "memory_gib": memory,
        "memory_mb": round(memory * 1024) if memory is not None else None,
        "storage_type": target.storage_type,
        "storage_gb": target.storage_gb,
        "ha": "true" if target.ha else "false",
        "engine_version": target.engine_version,
    }
    return {k: text_value(v) for k, v in values.items() if v is not None}


def text_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def variable_env(variables: Mapping[str, str]) -> dict[str, str]:
    """The same variables as environment variables: `DBSCALE_TARGET_VCPUS=2`, ..."""
    return {f"DBSCALE_TARGET_{k.upper()}": v for k, v in variables.items()}


def fill(template: str, variables: Mapping[str, str], what: str) -> str:
    """`template` with each `{field}` replaced; an unknown or unset field is a `PlanError`."""

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key is None:
            return match.group(0)[0]
        if key not in variables:
            known = ", ".join(sorted(variables))
            raise PlanError(
                f"{what} uses {{{key}}}, which this target does not set",
                f"set `{key}` on the target, or use one of: {known}",
            )
        return variables[key]

    return _VARIABLE.sub(one, template)


def check_hooks(target: TargetProfile, extra: Sequence[str] = ("results_dir",)) -> None:
    """Fills every hook once with placeholder values, so a bad `{field}` stops the plan before
    anything runs."""
    if target.hooks is None:
        return
    variables = {**target_variables(target), **{k: k for k in extra}}
    name = getattr(target, "name", "?")
    for hook_name in HOOK_NAMES:
        hook = target.hooks.get(hook_name)
        if hook is not None:
            fill(hook.run, variables, f"target {name}: hook {hook_name}")
