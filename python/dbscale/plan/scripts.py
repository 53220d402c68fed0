"""The `script` workload's mix: pgbench script files and built-ins with weights, from the command
line (`dbscale run script:FILE[@W] ... tpcb@W`, as `pgbench -f FILE@W -b NAME@W`) or a plan's
`workload.scripts`. Files are read once, here, and checked by the core before anything runs;
their text travels in the run's configuration and is recorded with each run."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from dbscale.core.config import ScriptSource
from dbscale.errors import ConfigError
from dbscale.plan.document import PlanLocator
from dbscale.plan.schema import PlanSchema, ScriptEntry
from dbscale.values import ParamValue

SCRIPT_WORKLOAD = "script"
_WEIGHTED = re.compile(r"[^/@]+@\d+")
FILE_PREFIX = "script:"

__all__ = [
    "SCRIPT_WORKLOAD",
    "ResolvedScripts",
    "is_mix",
    "mix_entries",
    "parse_defines",
    "resolve_scripts",
    "scripts_digest",
]

# A workload entry's scripts as the core gets them, and its `--define` variables.
ResolvedScripts = tuple[list[ScriptSource], dict[str, str]]


def is_mix(items: Sequence[str]) -> bool:
    """Whether the command line's workload words are a script mix rather than one workload:
    several words, a `script:` file, or a weighted built-in (`tpcb@1`)."""
    return len(items) > 1 or any(
        item.startswith(FILE_PREFIX) or _WEIGHTED.fullmatch(item) for item in items
    )


def _weighted(item: str) -> tuple[str, int]:
    """`NAME@W` into its name and weight (1 when no weight is given)."""
    name, at, weight = item.rpartition("@")
    if not at:
        return item, 1
    if not weight.isdigit():
        raise ConfigError(
            f"{item!r}: the weight after @ must be a whole number",
            "write script:FILE@WEIGHT or BUILTIN@WEIGHT, e.g. script:mine.sql@3 tpcb@1",
        )
    return name, int(weight)


def mix_entries(items: Sequence[str]) -> list[dict[str, str | int]]:
    """The command line's `script:FILE[@W]` and `BUILTIN[@W]` words as plan script entries."""
    entries: list[dict[str, str | int]] = []
    for item in items:
        spec, weight = _weighted(item)
        if spec.startswith(FILE_PREFIX):
            path = spec[len(FILE_PREFIX) :]
            if not path:
                raise ConfigError(
                    f"{item!r} names no file", "write script:FILE, e.g. script:mine.sql"
                )
            entries.append({"file": path, "weight": weight})
        else:
            entries.append({"builtin": spec, "weight": weight})
    return entries


def parse_defines(pairs: Iterable[str]) -> dict[str, str]:
    """`--define name=value` (pgbench -D): the value kept as text, as pgbench keeps it."""
    defines: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ConfigError(
                f"--define {pair!r} is not name=value",
                "write --define name=value, e.g. -D delta=100",
            )
        defines[name] = value
    return defines


def _define_text(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# The largest script file read (the core refuses larger texts too): parsing costs memory in
# proportion, and no benchmark script comes near it.
MAX_SCRIPT_BYTES = 1 << 20


def _base_dir(locator: PlanLocator) -> Path:
    """Script files of a plan are relative to the plan's directory; of the command line, to
    the current directory."""
    source = Path(locator.source)
    return source.parent if source.is_file() else Path.cwd()


def _read(locator: PlanLocator, at: tuple[str | int, ...], base: Path, entry: ScriptEntry) -> str:
    assert entry.file is not None
    path = Path(entry.file)
    path = path if path.is_absolute() else base / path
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_SCRIPT_BYTES + 1)  # never more: a huge file is refused unread
        if len(raw) > MAX_SCRIPT_BYTES:
            raise locator.error(
                at,
                f"script file {entry.file!r} is over {MAX_SCRIPT_BYTES >> 20} MiB",
                "a pgbench script is a few statements; generate data with a loader instead",
            )
        return raw.decode("utf-8")
    except FileNotFoundError:
        raise locator.error(
            at, f"script file {entry.file!r} does not exist", "check the path"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise locator.error(
            at, f"cannot read script file {entry.file!r}: {reason}", "a script is UTF-8 text"
        ) from None


def resolve_scripts(locator: PlanLocator, plan: PlanSchema) -> dict[str, ResolvedScripts]:
    """Each script workload entry's scripts (files read) and defines. The core checks them with
    the rest of each point's workload (`build._check_point_workloads`): a script that does not
    parse is refused with its file, line and column."""
    resolved: dict[str, ResolvedScripts] = {}
    many = plan.workloads is not None
    base = _base_dir(locator)
    for i, entry in enumerate(plan.workload_entries()):
        at: tuple[str | int, ...] = ("workloads", i) if many else ("workload",)
        if entry.name.strip().lower() != SCRIPT_WORKLOAD:
            if entry.scripts or entry.defines:
                raise locator.error(
                    at,
                    f"scripts and defines belong to the script workload, not {entry.name}",
                    "name the workload `script`, or drop `scripts` and `defines`",
                )
            continue
        if not entry.scripts:
            raise locator.error(
                at, "the script workload needs scripts",
                "give script files (`dbscale run script:FILE`) or a plan's workload.scripts",
            )  # fmt: skip
        sources = [
            ScriptSource(
                name=script.file or script.builtin or "",
                text=_read(locator, (*at, "scripts", j), base, script) if script.file else None,
                weight=script.weight,
            )
            for j, script in enumerate(entry.scripts)
        ]
        defines = {name: _define_text(value) for name, value in entry.defines.items()}
        resolved[entry.display] = (sources, defines)
    return resolved


def scripts_digest(sources: Sequence[ScriptSource], defines: Mapping[str, str]) -> str:
    """What a resumed study compares: each script's name, weight and text, and the defines."""
    h = hashlib.sha256()
    for source in sources:
        h.update(f"{source.name}@{source.weight}\0{source.text or ''}\0".encode())
    for name, value in sorted(defines.items()):
        h.update(f"{name}={value}\0".encode())
    return h.hexdigest()[:16]
