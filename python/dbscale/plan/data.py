"""What `dbscale prepare` and `cleanup` act on: a workload, its parameters and one target. Kept
apart from the study plan (`plan.py`) so these commands import only what they use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig, make_run_config
from dbscale.modes import TlsMode
from dbscale.plan.catalog import Catalog
from dbscale.targets.url import TargetSpec, node_urls, resolve_target
from dbscale.values import ParamValue, parse_set


@dataclass(frozen=True)
class DataPlan:
    """What `prepare`/`cleanup` send: only the target and the workload matter there."""

    workload: str
    params: dict[str, ParamValue]
    target: TargetSpec
    tls: TlsMode | None = None

    def config(self, url: str) -> RunConfig:
        """Loads and checks go through a cluster's first node (the others replicate)."""
        first, *more = node_urls(url)
        return make_run_config(
            target=TargetConfig(url=first, more_urls=more, tls=self.tls),
            workload=WorkloadConfig(name=self.workload, params=self.params),
        )


def build_data_plan(
    workload: str,
    *,
    target: str | None,
    set_params: Sequence[str],
    tls: TlsMode | None,
    load_catalog: Callable[[], Catalog],
    env: Mapping[str, str],
) -> DataPlan:
    spec = resolve_target(target, env)
    params = parse_set(set_params)
    catalog = load_catalog()
    info = catalog.resolve(workload)
    catalog.check_params(info, params)
    catalog.check_config(WorkloadConfig(name=info.name, params=params))
    return DataPlan(workload=info.name, params=params, target=spec, tls=tls)
