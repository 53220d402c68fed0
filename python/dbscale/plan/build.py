"""The plan of one `dbscale run`, resolved once: a plan file, a bundled recipe, or the command
line alone (a workload and flags, where `-c 1,4,8` is a one-axis sweep) all become one plan
document; flags and `--set` override its fields; it is validated, the matrix expanded, workloads
and parameters checked against the native catalog, and the study's steps ordered. Nothing runs
before all of that has passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from dbscale.core.config import WorkloadConfig, plain_message
from dbscale.errors import DbscaleError, PlanError
from dbscale.modes import WorkloadFamily
from dbscale.plan.catalog import Catalog, WorkloadInfo
from dbscale.plan.data import DataPlan, build_data_plan
from dbscale.plan.document import PathKey, PlanDocument, PlanLocator
from dbscale.plan.faults import fault_steps
from dbscale.plan.matrix import Matrix, parse_matrix
from dbscale.plan.schema import LoadSettings, PlanSchema, Transport
from dbscale.plan.scripts import ResolvedScripts, resolve_scripts
from dbscale.plan.sources import (
    DEMO_CLIENTS,
    DEMO_DURATION_S,
    DEMO_PARAMS,
    DEMO_WARMUP_S,
    DEMO_WORKLOAD,
    RunOptions,
    assemble_document,
    default_clients,
)
from dbscale.plan.study import TLS_NEEDS_TCP, Point, Study, order_steps
from dbscale.plan.targets import prepare_targets
from dbscale.plan.tpcc_sizing import sized
from dbscale.plan.workload_check import check_workloads
from dbscale.results.directory import default_results_dir
from dbscale.targets.spec import TargetEntry
from dbscale.targets.url import TargetSpec, is_private_url, loopback_postgres, resolve_target
from dbscale.values import AxisValue, point_key

__all__ = [
    "DEMO_CLIENTS",
    "DEMO_DURATION_S",
    "DEMO_PARAMS",
    "DEMO_WARMUP_S",
    "DEMO_WORKLOAD",
    "DataPlan",
    "RunOptions",
    "build_data_plan",
    "build_study",
    "target_spec",
]


def build_study(
    options: RunOptions,
    *,
    load_catalog: Callable[[], Catalog],
    env: Mapping[str, str],
    now: datetime,
) -> Study:
    """Checks every option and the whole plan; nothing runs if anything is wrong."""
    doc, plain = assemble_document(options)
    plan = _validate(doc)
    locator = doc.locator()  # from here on the validated plan is read; origins only name values
    plan = plan.model_copy(update={"targets": prepare_targets(plan.targets, env)})  # issue 6
    matrix = parse_matrix(locator, plan)
    targets = _resolve_targets(locator, plan, env)
    catalog = load_catalog()
    workloads = check_workloads(locator, plan, matrix, catalog)
    if plain and options.workload is not None and not options.clients:
        plan = _with_default_clients(plan, workloads)
        _refuse_threads_over_clients(plan, options.threads)
    scripts = resolve_scripts(locator, plan)
    points = _with_local_poolers(_points(locator, plan, matrix, targets, workloads, scripts))
    _check_point_workloads(points, catalog)
    _refuse_idle_workers(plan, points)
    _refuse_unchecked(locator, plan, points)
    if options.capacity is not None:
        _refuse_several_searches(points)
    if options.resume is not None and options.out is not None:
        raise PlanError("--resume and --out both name a results directory", "give only --resume")
    name = plan.name or (
        plan.workload_entries()[0].name if len(plan.workload_entries()) == 1 else "study"
    )
    out_dir = options.resume or options.out or default_results_dir(name, now)
    return Study(
        plan=plan,
        points=points,
        steps=order_steps(plan, points),
        out_dir=out_dir,
        source=locator.source,
        demo=plain and options.workload is None,
        command=locator.command,
    )


def _with_default_clients(plan: PlanSchema, workloads: dict[str, WorkloadInfo]) -> PlanSchema:
    """A plain run without --clients: a capacity search's (the knob's), else its workload
    family's default client count."""
    if plan.capacity is not None:
        clients = plan.capacity.default_clients()
    else:
        [entry] = plan.workload_entries()
        clients = default_clients(workloads[entry.display].family, entry.params)
    return plan.model_copy(update={"load": plan.load.model_copy(update={"clients": clients})})


def _refuse_threads_over_clients(plan: PlanSchema, threads: int | None) -> None:
    """`--threads 4` without `-c`: sysbench's habit for 4 connections, which here would be 4
    worker threads sharing the default client count (1): refused, naming both meanings."""
    clients = plan.load.clients
    few = clients if isinstance(clients, int) else None
    if threads is None or few is None or threads <= few:
        return
    raise PlanError(
        f"--threads {threads} with {few} client{'s' if few != 1 else ''}: dbscale's -j/--threads "
        "are worker threads, each driving some of the clients (-c), so most would have none",
        f"for sysbench's --threads={threads} ({threads} connections) give -c {threads}; for "
        f"worker threads give the clients too (-c {threads * 2} -j {threads})",
    )


def _refuse_several_searches(points: list[Point]) -> None:
    """`dbscale capacity` searches one configuration (a plan searches each of its points)."""
    runnable = [p for p in points if p.skipped is None]
    if len(runnable) != 1:
        raise PlanError(
            f"dbscale capacity searches one configuration; these options give {len(runnable)} "
            "points",
            "give one client count and one target (no lists, no matrix); a plan with a "
            "`capacity:` section searches each of its points (dbscale run PLAN)",
        )


def _check_point_workloads(points: list[Point], catalog: Catalog) -> None:
    """Each point's workload built as its runs will build it (once per distinct configuration),
    so a value out of range stops the plan before any target starts."""
    seen: set[str] = set()
    for point in points:
        config = WorkloadConfig(
            name=point.workload, params=point.params, scripts=list(point.scripts),
            defines=point.defines,
        )  # fmt: skip
        key = config.model_dump_json()
        if key in seen or point.skipped is not None:
            continue
        seen.add(key)
        try:
            catalog.check_config(config)
        except DbscaleError as exc:
            raise type(exc)(f"{_naming(point)}{exc.message}", exc.hint) from None


def _naming(point: Point) -> str:
    """`point KEY: ` before a message about one point of a matrix; nothing for a plain run."""
    return "" if point.key == "default" else f"point {point.key}: "


def _refuse_idle_workers(plan: PlanSchema, points: list[Point]) -> None:
    """Every point's clients cover the scale-out's workers, checked before any worker starts."""
    if plan.scale_out is None:
        return
    workers = plan.scale_out.workers
    for point in points:
        if point.skipped is None and point.load.clients < workers:
            raise PlanError(
                f"{_naming(point)}--workers {workers} is more than the run's {point.load.clients} "
                "clients: a worker without clients would only add noise",
                f"use at most {point.load.clients} workers, or more clients",
            )


def _validate(doc: PlanDocument) -> PlanSchema:
    try:
        return PlanSchema.model_validate(doc.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        kind = first["type"]
        if kind == "extra_forbidden":
            parent = doc.get(loc[:-1])
            known = _known_keys(loc[:-1], parent)
            raise doc.error(
                loc, "unknown key", f"known keys here: {', '.join(known)}" if known else None
            ) from None
        hint = getattr((first.get("ctx") or {}).get("error"), "hint", None)
        raise doc.error(loc, plain_message(first), hint) from None


def _known_keys(path: PathKey, parent: Any) -> list[str]:
    from dbscale.plan import schema as s

    models: dict[str, type[BaseModel]] = {
        "": s.PlanSchema, "load": s.LoadSettings, "prepare": s.PrepareSettings,
        "prepare.warmup": s.DataWarmup, "statistics": s.StatisticsSettings,
        "targets": TargetEntry, "workload": s.WorkloadEntry, "workloads": s.WorkloadEntry,
    }  # fmt: skip
    name = ".".join(str(p) for p in path if isinstance(p, str))
    model = models.get(name)
    return list(model.model_fields) if model is not None else []


def _resolve_targets(
    locator: PlanLocator, plan: PlanSchema, env: Mapping[str, str]
) -> dict[str, TargetEntry]:
    """Targets with PGPASSWORD merged into their URLs; malformed URLs refused with their line."""
    resolved: dict[str, TargetEntry] = {}
    for i, target in enumerate(plan.targets_or_embedded()):
        update: dict[str, str] = {}
        for field in ("url", "socket_url", "pooled_url"):
            raw = getattr(target, field)
            if raw is None or (field == "url" and is_private_url(raw)):
                continue
            try:
                spec = resolve_target(raw, env)
            except DbscaleError as exc:
                if locator.where(("targets", i, field)).startswith("command line"):
                    raise  # the flag's own message names --target
                raise locator.error(("targets", i, field), exc.message, exc.hint) from None
            update[field] = spec.url or raw
        resolved[target.name] = target.model_copy(update=update)
    return resolved


def target_spec(target: TargetEntry) -> TargetSpec:
    return TargetSpec(url=None if is_private_url(target.url) else target.url)


def _points(
    locator: PlanLocator,
    plan: PlanSchema,
    matrix: Matrix,
    targets: dict[str, TargetEntry],
    workloads: dict[str, WorkloadInfo],
    scripts: dict[str, ResolvedScripts],
) -> list[Point]:
    entries = {w.display: w for w in plan.workload_entries()}
    only_target = next(iter(targets.values()))
    only_workload = next(iter(entries.values()))
    points: list[Point] = []
    first_of: dict[str, str] = {}  # a point's settings (fingerprint) -> the first point's key
    for values in matrix.points():
        target = targets[str(values["target"])] if "target" in values else only_target
        entry = entries[str(values["workload"])] if "workload" in values else only_workload
        params = dict(entry.params)
        load_update: dict[str, AxisValue] = {}
        for axis in matrix.axes:
            if axis.kind == "param" and (value := values[axis.name]) is not None:
                params[axis.name] = value
            elif axis.kind == "load":
                load_update[axis.name] = values[axis.name]
        info = workloads[entry.display]
        faults = fault_steps(locator, plan, values, target)
        hosts = target.node_count
        params, sized_clients = sized(info.family, params, target.node_vcpus, hosts, target.name)
        if sized_clients is not None:
            load_update["clients"] = sized_clients
        elif ("clients" not in plan.load.model_fields_set and "clients" not in load_update
              and info.family in (WorkloadFamily.TPCC, WorkloadFamily.CH)):  # fmt: skip
            # Each point's own terminals (and CH-benCHmark's streams) when none are given.
            load_update["clients"] = default_clients(info.family, params)
        load = LoadSettings.model_validate({**plan.load.model_dump(), **load_update})
        sources, defines = scripts.get(entry.display, ([], {}))
        point = Point(
            key=point_key(values),
            values=values,
            target=target,
            workload=info.name,
            family=info.family,
            params=params,
            load=load,
            skipped=_skip_reason(target, load),
            scripts=tuple(sources),
            defines=defines,
            faults=faults,
        )
        _refuse_impossible(locator, plan, point)
        same = first_of.setdefault(point.fingerprint, point.key)
        if same != point.key and point.skipped is None:
            # Sized axes can meet (0.5 and 1 warehouse per vCPU are 1 warehouse at 1 vCPU):
            # the runs would repeat another point's under another name.
            point = replace(point, skipped=f"the same runs as {same} ({point.data_label})")
        points.append(point)
    if not any(p.skipped is None for p in points):
        reasons = sorted({p.skipped or "" for p in points})
        raise PlanError(f"{locator.source}: every point is skipped: {'; '.join(reasons)}", None)
    return points


def _skip_reason(target: TargetEntry, load: LoadSettings) -> str | None:
    if load.pooling and not target.pooled_url and not target.pools_locally:
        return f"pooling=on needs a pooler: target {target.name} has no pooled_url"
    return None


def _with_local_poolers(points: list[Point]) -> list[Point]:
    """Each local target with pooling: on points (and no pooled_url) as one with `pooler:
    pgbouncer`, in all of its points, so the study enters it with its pooler."""
    needing = {
        p.target.name for p in points
        if p.skipped is None and p.load.pooling and not p.target.pooled_url
    }  # fmt: skip
    pooled: dict[str, TargetEntry] = {}
    updated: list[Point] = []
    for point in points:
        if point.target.name in needing:
            target = pooled.setdefault(
                point.target.name, point.target.model_copy(update={"pooler": "pgbouncer"})
            )
            point = replace(point, target=target)
        updated.append(point)
    return updated


def _refuse_unchecked(locator: PlanLocator, plan: PlanSchema, points: list[Point]) -> None:
    """`prepare.check: run` needs workloads with consistency conditions (TPC-C)."""
    if plan.prepare.check == "never":
        return
    for point in points:
        if point.family not in (WorkloadFamily.TPCC, WorkloadFamily.CH):
            raise locator.error(
                ("prepare", "check"),
                f"check: run needs workloads with consistency conditions; {point.workload} has "
                "none (only tpcc and ch have)",
                "remove prepare.check, or run it on a tpcc or ch study",
            )


def _refuse_impossible(locator: PlanLocator, plan: PlanSchema, point: Point) -> None:
    load, target = point.load, point.target
    if load.transport is not Transport.UNIX or load.pooling:
        return
    if load.tls in TLS_NEEDS_TCP:
        raise locator.error(
            ("matrix",) if "matrix" in locator.sections else ("load", "tls"),
            f"point {point.key}: tls={load.tls.value} cannot run over a Unix socket",
            "exclude it: matrix.exclude: [{transport: unix, tls: " + load.tls.value + "}]",
        )
    # A PostgreSQL server on this machine is asked for its socket when the point runs.
    has_socket = (
        target.socket_dir
        or target.socket_url
        or is_private_url(target.url)
        or loopback_postgres(target.url) is not None
    )
    if not has_socket:
        index = [t.name for t in plan.targets_or_embedded()].index(target.name)
        raise locator.error(
            ("targets", index) if plan.targets else ("targets",),
            f"target {target.name} has no socket_dir or socket_url for transport=unix",
            f"give its socket directory: --set targets.{target.name}.socket_dir=DIR "
            "(e.g. /var/run/postgresql); a postgresql:// URL on localhost is asked for it",
        )
