"""What each CLI command does, once its options are parsed: resolve the plan, open the target,
call the core, write and print results. Messages go to stderr, data to stdout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime

from rich.console import Console
from rich.table import Table

from dbscale import __version__, data
from dbscale.config import TlsMode
from dbscale.native import load_core
from dbscale.plan import DataPlan, RunOptions, RunPlan, build_data_plan, build_plan
from dbscale.progress import make_progress
from dbscale.results import ResultsDir
from dbscale.runner import execute_plan
from dbscale.targets import OpenTarget, open_target
from dbscale.workloads import Catalog, WorkloadInfo


def _stdout() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:
        # Files and pipes get whole lines rather than an 80-column wrap.
        console = Console(highlight=False, width=max(console.width, 120))
    return console


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


def run(options: RunOptions, *, env: Mapping[str, str], now: datetime) -> None:
    """`dbscale run`: the plan's runs against the target, results appended as they finish."""
    plan = build_plan(options, load_catalog=Catalog.load, env=env, now=now)
    err = _stderr()
    err.print(f"target: {plan.target.describe()}")
    with open_target(plan.target) as target:
        if plan.demo:
            _ensure_demo_data(plan, target, err)
        results = ResultsDir(plan.out_dir)
        execute_plan(
            plan,
            target.url,
            results=results,
            progress=make_progress(err),
            out=_stdout(),
            version=__version__,
        )


def _ensure_demo_data(plan: RunPlan, target: OpenTarget, err: Console) -> None:
    """The demo prepares the embedded server's TPC-B data unless that scale is already there."""
    if target.server is None:
        return  # someone else's server: the user prepares it
    scale = plan.params.get("scale")
    if data.tpcb_scale_loaded(target.server) == scale:
        err.print(f"reusing the embedded server's {plan.workload} data (scale {scale})")
        return
    err.print(f"preparing {plan.workload} scale {scale} on the embedded server ...")
    config = DataPlan(plan.workload, plan.params, plan.target, plan.tls).config(target.url)
    data.print_data_summary(err, "prepare", data.prepare(config))


def prepare(plan: DataPlan) -> None:
    err = _stderr()
    err.print(f"preparing {plan.workload} on {plan.target.describe()} ...")
    with open_target(plan.target) as target:
        summary = data.prepare(plan.config(target.url))
    data.print_data_summary(err, "prepare", summary)


def cleanup(plan: DataPlan) -> None:
    err = _stderr()
    err.print(f"dropping {plan.workload}'s tables on {plan.target.describe()} ...")
    with open_target(plan.target) as target:
        summary = data.cleanup(plan.config(target.url))
    data.print_data_summary(err, "cleanup", summary)


def plan_data(
    workload: str,
    *,
    target: str | None,
    set_params: list[str],
    tls: TlsMode | None,
    env: Mapping[str, str],
) -> DataPlan:
    return build_data_plan(
        workload,
        target=target,
        set_params=set_params,
        tls=tls,
        load_catalog=Catalog.load,
        env=env,
    )


def workloads(as_json: bool) -> None:
    """`dbscale workloads`: the native catalog."""
    catalog = Catalog.load()
    out = _stdout()
    if as_json:
        out.print_json(
            json.dumps({name: _info_json(info) for name, info in catalog.workloads.items()})
        )
        return
    for info in catalog.workloads.values():
        aliases = f" (aliases: {', '.join(info.aliases)})" if info.aliases else ""
        out.print(f"[bold]{info.name}[/bold]{aliases}: {info.description}")
        if info.params:
            table = Table(show_header=True, box=None, padding=(0, 2))
            table.add_column("--set key")
            table.add_column("default")
            table.add_column("meaning")
            for param in info.params.values():
                table.add_row(param.name, json.dumps(param.default), param.doc)
            out.print(table)
        out.print()


def _info_json(info: WorkloadInfo) -> dict[str, object]:
    return asdict(info)


def version() -> None:
    """`dbscale version`: this package and, if built, the native core."""
    out = _stdout()
    out.print(f"dbscale {__version__}")
    try:
        core_version = load_core().version()
    except Exception as exc:  # a missing core is reported, not fatal, here
        core_version = f"not available ({type(exc).__name__})"
    out.print(f"dbscale._core {core_version}")
