"""The plan of one `dbscale run`: the command line resolved once into the runs to make (an
optional warm-up, then one run per client level), where results go, and whether this is the demo.
Target-independent; `PlannedRun` configs get the target URL once the target is open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from dbscale.config import (
    ConnectMode,
    QueryProtocol,
    RunConfig,
    TargetConfig,
    TlsMode,
    WorkloadConfig,
    make_run_config,
)
from dbscale.options import ParamValue, parse_clients, parse_duration, parse_set
from dbscale.results import default_results_dir
from dbscale.targets.url import TargetSpec, resolve_target
from dbscale.workloads import Catalog

DEMO_WORKLOAD = "tpcb"
DEMO_PARAMS: dict[str, ParamValue] = {"scale": 10}
DEMO_CLIENTS = (1, 4, 8)
DEMO_DURATION_S = 10.0
DEMO_WARMUP_S = 5.0


@dataclass(frozen=True)
class RunOptions:
    """`dbscale run`'s command line as typed (strings where the CLI takes text)."""

    workload: str | None = None
    target: str | None = None
    clients: Sequence[str] = ()
    duration: str | None = None
    protocol: QueryProtocol | None = None
    connect: ConnectMode | None = None
    rate_tps: float | None = None
    threads: int | None = None
    max_tries: int | None = None
    tls: TlsMode | None = None
    set_params: Sequence[str] = ()
    out: Path | None = None
    warmup: str | None = None
    seed: int | None = None


@dataclass(frozen=True)
class PlannedRun:
    config: RunConfig
    warmup: bool
    label: str


@dataclass(frozen=True)
class RunPlan:
    workload: str
    params: dict[str, ParamValue]
    target: TargetSpec
    clients_levels: list[int]
    warmup_s: float | None
    out_dir: Path
    demo: bool
    tls: TlsMode | None = None
    # Everything else the configs share (protocol, connect, threads, ...), as RunConfig fields.
    shared: dict[str, object] = field(default_factory=dict)

    def runs(self, url: str) -> list[PlannedRun]:
        """The runs, in order, against the opened target's URL."""
        target = TargetConfig(url=url, tls=self.tls)
        workload = WorkloadConfig(name=self.workload, params=self.params)
        fields = self.shared
        planned: list[PlannedRun] = []
        if self.warmup_s is not None:
            config = make_run_config(
                target=target, workload=workload, **{**fields, "clients": max(self.clients_levels)}
            )
            config = config.model_copy(update={"duration_s": self.warmup_s})
            planned.append(PlannedRun(config, warmup=True, label="warm-up"))
        for clients in self.clients_levels:
            config = make_run_config(target=target, workload=workload, clients=clients, **fields)
            planned.append(PlannedRun(config, warmup=False, label=f"clients={clients}"))
        return planned


def build_plan(
    options: RunOptions,
    *,
    load_catalog: Callable[[], Catalog],
    env: Mapping[str, str],
    now: datetime,
) -> RunPlan:
    """Checks every option, then the workload and its parameters against the catalog.
    Plain value errors come first so they need no native module."""
    demo = options.workload is None
    target = resolve_target(options.target, env)
    levels = parse_clients(options.clients) or (list(DEMO_CLIENTS) if demo else [1])
    duration_s = parse_duration(options.duration) if options.duration else None
    if duration_s is None and demo:
        duration_s = DEMO_DURATION_S
    warmup_s = parse_duration(options.warmup, "--warmup") if options.warmup else None
    if warmup_s is None and demo:
        warmup_s = DEMO_WARMUP_S
    params = {**(DEMO_PARAMS if demo else {}), **parse_set(options.set_params)}
    shared: dict[str, object] = {
        key: value
        for key, value in {
            "protocol": options.protocol,
            "connect": options.connect,
            "threads": options.threads,
            "duration_s": duration_s,
            "rate_tps": options.rate_tps,
            "max_tries": options.max_tries,
            "seed": options.seed,
        }.items()
        if value is not None
    }
    # Validate the shared fields once, against a placeholder target and workload.
    make_run_config(
        target=TargetConfig(url="postgresql://check"),
        workload=WorkloadConfig(name="check"),
        clients=max(levels),
        **shared,
    )
    catalog = load_catalog()
    info = catalog.resolve(options.workload or DEMO_WORKLOAD)
    catalog.check_params(info, params)
    out_dir = options.out or default_results_dir(info.name, now)
    return RunPlan(
        workload=info.name,
        params=params,
        target=target,
        clients_levels=levels,
        warmup_s=warmup_s,
        out_dir=out_dir,
        demo=demo,
        tls=options.tls,
        shared=shared,
    )


@dataclass(frozen=True)
class DataPlan:
    """What `prepare`/`cleanup` send: only the target and the workload matter there."""

    workload: str
    params: dict[str, ParamValue]
    target: TargetSpec
    tls: TlsMode | None = None

    def config(self, url: str) -> RunConfig:
        return make_run_config(
            target=TargetConfig(url=url, tls=self.tls),
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
    return DataPlan(workload=info.name, params=params, target=spec, tls=tls)
