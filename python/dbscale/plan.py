"""The plan of one `dbscale run`, resolved once: a plan file, a bundled recipe, or the command
line alone (a workload and flags, where `-c 1,4,8` is a one-axis sweep) all become one plan
document; flags and `--set` override its fields; it is validated, the matrix expanded, workloads
and parameters checked against the native catalog, and the study's steps ordered. Nothing runs
before all of that has passed.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dbscale.config import (
    ConnectMode,
    QueryProtocol,
    RunConfig,
    TargetConfig,
    TlsMode,
    WorkloadConfig,
    make_run_config,
)
from dbscale.errors import DbscaleError, PlanError
from dbscale.matrix import Matrix, parse_matrix, point_key
from dbscale.options import ParamValue, parse_clients, parse_duration, parse_param_value, parse_set
from dbscale.plan_file import PathKey, PlanDocument, load_plan_file, parse_cli_value, split_set_path
from dbscale.plan_schema import LOAD_FIELDS, LoadSettings, PlanSchema, TargetEntry, Transport
from dbscale.recipes import load_recipe
from dbscale.results import default_results_dir
from dbscale.study import TLS_NEEDS_TCP, Point, Study, order_steps
from dbscale.targets.url import EMBEDDED, TargetSpec, resolve_target
from dbscale.workloads import Catalog, WorkloadInfo

DEMO_WORKLOAD = "tpcb"
DEMO_PARAMS: dict[str, ParamValue] = {"scale": 10}
DEMO_CLIENTS = (1, 4, 8)
DEMO_DURATION_S = 10.0
DEMO_WARMUP_S = 5.0
CLI_DURATION_S = 10.0
PLAN_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class RunOptions:
    """`dbscale run`'s command line as typed (strings where the CLI takes text)."""

    workload: str | None = None  # a workload name, or the path of a plan file
    target: str | Sequence[str] | None = None
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
    repeat: int | None = None
    warmup_runs: int | None = None
    cooldown: str | None = None
    recipe: str | None = None
    quick: bool = False
    resume: Path | None = None

    @property
    def targets(self) -> list[str]:
        if self.target is None:
            return []
        return [self.target] if isinstance(self.target, str) else list(self.target)

    @property
    def plan_path(self) -> Path | None:
        name = self.workload
        if name is None:
            return None
        if name.endswith(PLAN_SUFFIXES) or (Path(name).is_file() and "/" in name):
            return Path(name)
        return None


def build_study(
    options: RunOptions,
    *,
    load_catalog: Callable[[], Catalog],
    env: Mapping[str, str],
    now: datetime,
) -> Study:
    """Checks every option and the whole plan; nothing runs if anything is wrong."""
    flags = _FlagValues.parse(options)
    doc, from_flags = _document(options, flags)
    if options.quick:
        _apply_quick(doc)
    if not from_flags:
        _apply_flags(doc, options, flags)
    plan = _validate(doc)
    matrix = parse_matrix(doc, plan)
    targets = _resolve_targets(doc, plan, env)
    catalog = load_catalog()
    workloads = _check_workloads(doc, plan, matrix, catalog)
    points = _points(doc, plan, matrix, targets, workloads)
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
        source=doc.source,
        demo=from_flags and options.workload is None,
        document=doc.data,
    )


@dataclass(frozen=True)
class _FlagValues:
    """The flags' values, checked before anything else (no catalog, no file needed)."""

    clients: list[int]
    duration_s: float | None
    warmup_s: float | None
    cooldown_s: float | None
    params: dict[str, ParamValue]

    @classmethod
    def parse(cls, options: RunOptions) -> _FlagValues:
        clients = parse_clients(options.clients)
        duration_s = parse_duration(options.duration) if options.duration else None
        warmup_s = parse_duration(options.warmup, "--warmup") if options.warmup else None
        cooldown_s = None
        if options.cooldown is not None:
            cooldown_s = (
                0.0
                if options.cooldown.strip() in ("0", "0s")
                else parse_duration(options.cooldown, "--cooldown")
            )
        for value, flag in ((options.repeat, "--repeat"), (options.warmup_runs, "--warmup-runs")):
            if value is not None and value < (1 if flag == "--repeat" else 0):
                raise PlanError(
                    f"{flag} must be at least {1 if flag == '--repeat' else 0}, got {value}"
                )
        shared = {
            "protocol": options.protocol, "connect": options.connect, "threads": options.threads,
            "duration_s": duration_s, "rate_tps": options.rate_tps,
            "max_tries": options.max_tries, "seed": options.seed,
        }  # fmt: skip
        make_run_config(
            target=TargetConfig(url="postgresql://check"),
            workload=WorkloadConfig(name="check"),
            clients=max(clients or [1]),
            **{k: v for k, v in shared.items() if v is not None},
        )
        plan_mode = options.plan_path is not None or options.recipe is not None
        params = {} if plan_mode else parse_set(options.set_params)
        return cls(clients, duration_s, warmup_s, cooldown_s, params)


def _document(options: RunOptions, flags: _FlagValues) -> tuple[PlanDocument, bool]:
    """The plan document and whether it was built from the flags alone."""
    if options.recipe is not None:
        if options.workload is not None:
            raise PlanError(
                f"--recipe {options.recipe} and {options.workload!r} both say what to run",
                "give a recipe, a plan file or a workload, not two",
            )
        return load_recipe(options.recipe), False
    path = options.plan_path
    if path is not None:
        return load_plan_file(path), False
    if options.quick:
        raise PlanError("--quick applies to recipes and plans with a `quick` section", None)
    return _document_from_flags(options, flags), True


def _document_from_flags(options: RunOptions, flags: _FlagValues) -> PlanDocument:
    demo = options.workload is None
    levels = flags.clients or (list(DEMO_CLIENTS) if demo else [1])
    targets = [_target_entry(raw, i, len(options.targets)) for i, raw in enumerate(options.targets)]
    load: dict[str, Any] = {
        "clients": levels[0],
        "duration": flags.duration_s or (DEMO_DURATION_S if demo else CLI_DURATION_S),
    }
    for name, value in _load_flag_values(options).items():
        load[name] = value
    data: dict[str, Any] = {
        "targets": targets,
        "workload": {
            "name": options.workload or DEMO_WORKLOAD,
            "params": {**(DEMO_PARAMS if demo else {}), **flags.params},
        },
        "load": load,
        "repeat": options.repeat or 1,
        "warmup_runs": options.warmup_runs or 0,
        "cooldown": flags.cooldown_s or 0.0,
        "prepare": {"load": "never"},
    }
    if len(levels) > 1:
        data["matrix"] = {"clients": levels}
    warmup_s = flags.warmup_s or (DEMO_WARMUP_S if demo else None)
    if warmup_s is not None:
        data["prepare"]["warmup"] = {"duration": warmup_s}
    return PlanDocument(data, "command line", {(): "command line"})


def _load_flag_values(options: RunOptions) -> dict[str, Any]:
    values = {
        "protocol": options.protocol, "connect": options.connect, "rate": options.rate_tps,
        "threads": options.threads, "max_tries": options.max_tries, "tls": options.tls,
        "seed": options.seed,
    }  # fmt: skip
    return {k: (v.value if hasattr(v, "value") else v) for k, v in values.items() if v is not None}


_FLAG_NAMES = {
    "clients": "--clients", "duration": "--duration", "protocol": "--protocol",
    "connect": "--connect", "rate": "--rate", "threads": "--threads",
    "max_tries": "--max-tries", "tls": "--tls", "seed": "--seed",
}  # fmt: skip


def _split_target(raw: str) -> tuple[str | None, str]:
    """`NAME=URL` names a target; a bare URL (or libpq key=value string) does not."""
    name, sep, rest = raw.partition("=")
    if sep and "://" in rest and "://" not in name and " " not in name:
        return name.strip(), rest.strip()
    return None, raw.strip()


def _target_entry(raw: str, index: int, count: int) -> dict[str, Any]:
    name, url = _split_target(raw)
    if name is None:
        name = (
            "embedded" if url.lower() == EMBEDDED else ("main" if count == 1 else f"t{index + 1}")
        )
    return {"name": name, "url": url}


def _apply_quick(doc: PlanDocument) -> None:
    quick = doc.data.get("quick")
    if not isinstance(quick, dict) or not quick:
        raise PlanError(f"{doc.source} has no quick variant (a `quick` section)", None)
    origin = f"{doc.where(('quick',))} (quick)"
    for key, value in quick.items():
        doc.set(split_set_path(str(key)), value, origin)


def _apply_flags(doc: PlanDocument, options: RunOptions, flags: _FlagValues) -> None:
    if options.targets:
        _override_targets(doc, options.targets)
    if flags.clients:
        _set_load(doc, "clients", flags.clients, "--clients")
    if flags.duration_s is not None:
        _set_load(doc, "duration", [flags.duration_s], "--duration")
    for name, value in _load_flag_values(options).items():
        _set_load(doc, name, [value], _FLAG_NAMES[name])
    if flags.warmup_s is not None:
        doc.set(("prepare", "warmup", "duration"), flags.warmup_s, "command line (--warmup)")
    for key, value, flag in (
        ("repeat", options.repeat, "--repeat"),
        ("warmup_runs", options.warmup_runs, "--warmup-runs"),
        ("cooldown", flags.cooldown_s, "--cooldown"),
    ):
        if value is not None:
            doc.set((key,), value, f"command line ({flag})")
    for pair in options.set_params:
        _apply_set(doc, pair)


def _override_targets(doc: PlanDocument, raw_targets: Sequence[str]) -> None:
    """`--target` replaces the plan's targets; one with a plan target's name keeps that target's
    other fields (socket_dir, pooled_url, ...), as does a lone unnamed one for a lone target."""
    planned = doc.data.get("targets") or []
    planned = [t for t in planned if isinstance(t, dict)]
    by_name = {t.get("name"): t for t in planned}
    entries = []
    for i, raw in enumerate(raw_targets):
        entry = _target_entry(raw, i, len(raw_targets))
        named = _split_target(raw)[0] is not None
        base = (
            by_name.get(entry["name"])
            if named
            else (planned[0] if len(planned) == 1 and len(raw_targets) == 1 else None)
        )
        entries.append(
            {**(base or {}), **entry, **({"name": base["name"]} if base and not named else {})}
        )
    doc.set(("targets",), entries, "command line (--target)")


def _set_load(doc: PlanDocument, name: str, values: list[Any], flag: str) -> None:
    origin = f"command line ({flag})"
    matrix = doc.data.get("matrix")
    if isinstance(matrix, dict):
        if name in matrix:
            doc.set(("matrix", name), values, origin)
            return
        zipped = matrix.get("zip")
        groups = zipped if isinstance(zipped, list) else [zipped]
        if any(isinstance(g, dict) and name in g for g in groups):
            raise PlanError(
                f"{flag} cannot override {name!r}: it is zipped with other axes in {doc.source}",
                "change the zip group with --set matrix.zip=... or edit the plan",
            )
    if len(values) == 1:
        doc.set(("load", name), values[0], origin)
    else:
        doc.set(("matrix", name), values, origin)


def _apply_set(doc: PlanDocument, pair: str) -> None:
    key, sep, text = pair.partition("=")
    key = key.strip()
    if not sep or not key:
        raise PlanError(
            f"--set {pair!r} is not key=value",
            "write --set key=value: a plan field (repeat=3, load.duration=10s, "
            "targets.main.socket_dir=/tmp) or a workload parameter (scale=10)",
        )
    origin = f"command line (--set {key})"
    path = split_set_path(key)
    if path[0] in PlanSchema.model_fields:
        doc.set(_by_name(doc, path), parse_cli_value(text), origin)
    elif key in LOAD_FIELDS:
        _set_load(doc, key, [parse_cli_value(text)], f"--set {key}")
    else:
        param = key.replace("-", "_")
        value = parse_param_value(text)
        if isinstance(doc.data.get("workloads"), list):
            for i, _ in enumerate(doc.data["workloads"]):
                _set_param(doc, ("workloads", i), param, value, origin)
        else:
            _set_param(doc, ("workload",), param, value, origin)


def _set_param(doc: PlanDocument, at: PathKey, param: str, value: Any, origin: str) -> None:
    current = doc.get(at)
    if isinstance(current, str):
        doc.set(at, {"name": current}, doc.where(at))
    doc.set((*at, "params", param), value, origin)


def _by_name(doc: PlanDocument, path: PathKey) -> PathKey:
    """`targets.main.url` -> `targets.0.url` when a list item is named `main`."""
    out: list[str | int] = []
    for part in path:
        node = doc.get(tuple(out))
        if isinstance(node, list) and isinstance(part, str):
            names = [item.get("name") if isinstance(item, dict) else None for item in node]
            if part not in names:
                raise doc.error(tuple(out), f"has no item named {part!r}")
            out.append(names.index(part))
        else:
            out.append(part)
    return tuple(out)


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
        message = first["msg"].removeprefix("Value error, ")
        given = first.get("input")
        if kind not in ("missing",) and not isinstance(given, dict | list):
            message += f", got {given!r}"
        raise doc.error(loc, message) from None


def _known_keys(path: PathKey, parent: Any) -> list[str]:
    from dbscale import plan_schema as s

    models: dict[str, Any] = {
        "": s.PlanSchema, "load": s.LoadSettings, "prepare": s.PrepareSettings,
        "prepare.warmup": s.DataWarmup, "statistics": s.StatisticsSettings,
        "targets": s.TargetEntry, "workload": s.WorkloadEntry, "workloads": s.WorkloadEntry,
    }  # fmt: skip
    name = ".".join(str(p) for p in path if isinstance(p, str))
    model = models.get(name)
    return list(model.model_fields) if model is not None else []


def _resolve_targets(
    doc: PlanDocument, plan: PlanSchema, env: Mapping[str, str]
) -> dict[str, TargetEntry]:
    """Targets with PGPASSWORD merged into their URLs; malformed URLs refused with their line."""
    resolved: dict[str, TargetEntry] = {}
    for i, target in enumerate(plan.targets_or_embedded()):
        update: dict[str, str] = {}
        for field in ("url", "socket_url", "pooled_url"):
            raw = getattr(target, field)
            if raw is None or (field == "url" and raw.strip().lower() == EMBEDDED):
                continue
            try:
                spec = resolve_target(raw, env)
            except DbscaleError as exc:
                if doc.where(("targets", i, field)).startswith("command line"):
                    raise  # the flag's own message names --target
                raise doc.error(("targets", i, field), exc.message, exc.hint) from None
            update[field] = spec.url or raw
        resolved[target.name] = target.model_copy(update=update)
    return resolved


def target_spec(target: TargetEntry) -> TargetSpec:
    return TargetSpec(url=None if target.url.strip().lower() == EMBEDDED else target.url)


def _check_workloads(
    doc: PlanDocument, plan: PlanSchema, matrix: Matrix, catalog: Catalog
) -> dict[str, WorkloadInfo]:
    """Workload names, their parameters and parameter axes, against the native catalog."""
    infos: dict[str, WorkloadInfo] = {}
    many = plan.workloads is not None
    for i, entry in enumerate(plan.workload_entries()):
        at: PathKey = ("workloads", i) if many else ("workload",)
        info = _located(doc, (*at, "name"), partial(catalog.resolve, entry.name))
        for key, value in entry.params.items():
            _check_param(doc, (*at, "params", key), info, key, value)
        for axis in matrix.axes:
            if axis.kind == "param" and axis.name not in info.params:
                known = [*LOAD_FIELDS, "target", "workload", *info.params]
                close = difflib.get_close_matches(axis.name, known, n=1)
                raise doc.error(
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
            doc, ("prepare", "warmup", "workload"), lambda: catalog.resolve(warmup.workload or "")
        )
        for key, value in (warmup.params or {}).items():
            _check_param(doc, ("prepare", "warmup", "params", key), info, key, value)
    return infos


def _located(doc: PlanDocument, path: PathKey, resolve: Callable[[], WorkloadInfo]) -> WorkloadInfo:
    try:
        return resolve()
    except DbscaleError as exc:
        raise doc.error(path, exc.message, exc.hint) from None


def _check_param(
    doc: PlanDocument, path: PathKey, info: WorkloadInfo, key: str, value: Any
) -> None:
    if key not in info.params:
        _located(doc, path, lambda: _raise_param(info, key))
    default = info.params[key].default
    if value is None or default is None:
        return
    expected: tuple[type, ...] = (
        (bool,) if isinstance(default, bool) else
        (int,) if isinstance(default, int) else
        (int, float) if isinstance(default, float) else (str,)
    )  # fmt: skip
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        raise doc.error(
            path,
            f"parameter {key} of {info.name} takes a {expected[-1].__name__}, got {value!r}",
            "`dbscale workloads` lists each parameter with its default",
        )


def _raise_param(info: WorkloadInfo, key: str) -> WorkloadInfo:
    Catalog({info.name: info}).check_params(info, {key: None})
    return info


def _points(
    doc: PlanDocument,
    plan: PlanSchema,
    matrix: Matrix,
    targets: dict[str, TargetEntry],
    workloads: dict[str, WorkloadInfo],
) -> list[Point]:
    entries = {w.display: w for w in plan.workload_entries()}
    only_target = next(iter(targets.values()))
    only_workload = next(iter(entries.values()))
    points: list[Point] = []
    for values in matrix.points():
        target = targets[values["target"]] if "target" in values else only_target
        entry = entries[values["workload"]] if "workload" in values else only_workload
        params = dict(entry.params)
        load_update: dict[str, Any] = {}
        for axis in matrix.axes:
            if axis.kind == "param":
                params[axis.name] = values[axis.name]
            elif axis.kind == "load":
                load_update[axis.name] = values[axis.name]
        load = LoadSettings.model_validate({**plan.load.model_dump(), **load_update})
        point = Point(
            key=point_key(values),
            values=values,
            target=target,
            workload=workloads[entry.display].name,
            params=params,
            load=load,
            skipped=_skip_reason(target, load),
        )
        _refuse_impossible(doc, plan, point)
        points.append(point)
    if not any(p.skipped is None for p in points):
        reasons = sorted({p.skipped or "" for p in points})
        raise PlanError(f"{doc.source}: every point is skipped: {'; '.join(reasons)}", None)
    return points


def _skip_reason(target: TargetEntry, load: LoadSettings) -> str | None:
    if load.pooling and not target.pooled_url:
        return f"pooling=on needs a pooler: target {target.name} has no pooled_url"
    return None


def _refuse_impossible(doc: PlanDocument, plan: PlanSchema, point: Point) -> None:
    load, target = point.load, point.target
    if load.transport is not Transport.UNIX or load.pooling:
        return
    if load.tls in TLS_NEEDS_TCP:
        raise doc.error(
            ("matrix",) if "matrix" in doc.data else ("load", "tls"),
            f"point {point.key}: tls={load.tls.value} cannot run over a Unix socket",
            "exclude it: matrix.exclude: [{transport: unix, tls: " + load.tls.value + "}]",
        )
    has_socket = target.socket_dir or target.socket_url or target.url.strip().lower() == EMBEDDED
    if not has_socket:
        index = [t.name for t in plan.targets_or_embedded()].index(target.name)
        raise doc.error(
            ("targets", index) if plan.targets else ("targets",),
            f"target {target.name} has no socket_dir or socket_url for transport=unix",
            f"give its socket directory: --set targets.{target.name}.socket_dir=DIR "
            "(e.g. /var/run/postgresql)",
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
