"""The workload catalog as the native core declares it (`_core.workloads()`): names, aliases,
descriptions and parameters. Names and `--set` keys are checked against it before anything runs,
so nothing here hard-codes a workload.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dbscale.core.answers import WorkloadEntry
from dbscale.errors import ConfigError, InternalError
from dbscale.modes import WorkloadFamily
from dbscale.plan.sysbench_flags import flag_for
from dbscale.plan.tpcc_sizing import SIZING_PARAMS

if TYPE_CHECKING:
    from dbscale.core.config import WorkloadConfig


@dataclass(frozen=True)
class ParamInfo:
    name: str
    default: Any
    doc: str


@dataclass(frozen=True)
class WorkloadInfo:
    name: str
    description: str
    family: WorkloadFamily
    aliases: tuple[str, ...] = ()
    params: dict[str, ParamInfo] = field(default_factory=dict)


@dataclass(frozen=True)
class Catalog:
    workloads: dict[str, WorkloadInfo]
    # Builds a workload from its resolved configuration without connecting, as a run will
    # (the native core's `check_workload`): values out of range are refused before any target
    # starts. A catalog read from JSON alone (tests) has none.
    builds: Callable[[WorkloadConfig], None] | None = field(default=None, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> Catalog:
        """Reads `{name: {"description", "params": {key: {"default", "doc"}}, "aliases"?}}`."""
        if not isinstance(data, Mapping):
            raise InternalError("the native workload catalog is not a JSON object")
        entries = {
            str(name): WorkloadEntry.model_validate({"name": name, **entry})
            for name, entry in data.items()
        }
        return cls.of(entries)

    @classmethod
    def of(cls, entries: Mapping[str, WorkloadEntry]) -> Catalog:
        """The catalog of the core's entries, TPC-C's sizing keys added to its parameters."""
        workloads: dict[str, WorkloadInfo] = {}
        for name, entry in entries.items():
            params = {
                key: ParamInfo(key, spec.default, spec.doc) for key, spec in entry.params.items()
            }
            if entry.family is WorkloadFamily.TPCC:
                params.update({k: ParamInfo(k, 0.0, doc) for k, doc in SIZING_PARAMS.items()})
            workloads[name] = WorkloadInfo(
                name=entry.name,
                description=entry.description,
                family=entry.family,
                aliases=entry.aliases,
                params=params,
            )
        return cls(workloads)

    @classmethod
    def load(cls) -> Catalog:
        """The catalog of the installed native module."""
        from dbscale import core

        catalog = cls.of(core.workloads())
        return cls(catalog.workloads, builds=core.check_workload)

    def names(self) -> list[str]:
        return list(self.workloads)

    def resolve(self, name: str) -> WorkloadInfo:
        """The workload called `name` or by an alias of it; `ConfigError` naming the known ones."""
        wanted = name.strip()
        for info in self.workloads.values():
            if wanted == info.name or wanted in info.aliases:
                return info
        for info in self.workloads.values():  # forgive case
            if wanted.lower() in {info.name.lower(), *(a.lower() for a in info.aliases)}:
                return info
        known = ", ".join(self.names())
        close = difflib.get_close_matches(wanted, self._all_names(), n=1)
        maybe = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"unknown workload {wanted!r}; known workloads: {known}",
            f"{maybe}`dbscale workloads` lists them with their parameters",
        )

    def check_params(self, workload: WorkloadInfo, params: Mapping[str, Any]) -> None:
        """Refuses `--set` keys the workload does not declare (the core checks types)."""
        for key in params:
            if key not in workload.params:
                known = ", ".join(workload.params) or "none"
                close = difflib.get_close_matches(key, list(workload.params), n=1)
                maybe = f"did you mean {close[0]!r}? " if close else ""
                sysbench = workload.family is WorkloadFamily.SYSBENCH
                flag = flag_for(key) if sysbench else None
                if flag is not None:
                    maybe = f"sysbench's --{key.replace('_', '-')} is not a parameter: use {flag}; "
                raise ConfigError(
                    f"workload {workload.name} has no parameter {key!r}; its parameters: {known}",
                    f"{maybe}`dbscale workloads` lists each workload's parameters",
                )

    def check_config(self, config: WorkloadConfig) -> None:
        """Builds the workload as a run will; the core's `ConfigError` (a value out of range,
        a script that does not parse) when it cannot be built."""
        if self.builds is not None:
            self.builds(config)

    def _all_names(self) -> list[str]:
        return [n for info in self.workloads.values() for n in (info.name, *info.aliases)]
