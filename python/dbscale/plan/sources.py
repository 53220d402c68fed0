"""Where a plan document comes from: a plan file, a bundled recipe, or the command line alone (a
workload and its flags, `-c 1,4,8` being a one-axis matrix); then the `--quick` variant and the
command line's flags and `--set` pairs applied over it, each value remembering its origin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from dbscale.core.config import MAX_DURATION_S, option_name
from dbscale.errors import PlanError
from dbscale.modes import ConnectMode, QueryProtocol, Routing, TlsMode, WorkloadFamily
from dbscale.plan.document import (
    PathKey,
    PlanDocument,
    item_name,
    load_plan_file,
    parse_cli_value,
    split_set_path,
)
from dbscale.plan.recipes import load_recipe
from dbscale.plan.schema import LOAD_FIELDS, PlanSchema
from dbscale.plan.scripts import SCRIPT_WORKLOAD, is_mix, mix_entries, parse_defines
from dbscale.plan.targets import include_targets_file
from dbscale.targets.url import EMBEDDED, node_urls
from dbscale.values import (
    ParamValue,
    is_zero_duration,
    parse_clients,
    parse_param_value,
    parse_set,
)

DEMO_WORKLOAD = "tpcb"
DEMO_PARAMS: dict[str, ParamValue] = {"scale": 10}
DEMO_CLIENTS = (1, 4, 8)
DEMO_DURATION_S = 10.0
DEMO_WARMUP_S = 5.0
CLI_DURATION_S = 10.0
PLAN_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class CapacityFlags:
    """`dbscale capacity`'s search flags as typed; None (or no objective): not given, so the
    plan's value or the `capacity:` section's default (plan/capacity_plan.py) holds."""

    slo: Sequence[str] = ()
    max_errors: str | None = None
    knob: str | None = None
    resolution: str | None = None
    settle: str | None = None
    measure: str | None = None
    confirm: int | None = None

    def given(self) -> dict[str, object]:
        values: dict[str, object] = {
            "slo": list(self.slo) or None, "max_errors": self.max_errors, "knob": self.knob,
            "resolution": self.resolution, "settle": self.settle, "measure": self.measure,
            "confirm": self.confirm,
        }  # fmt: skip
        return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True)
class RunOptions:
    """`dbscale run`'s command line as typed (strings where the CLI takes text)."""

    # A workload name or the path of a plan file; several words, or `script:FILE`, are a
    # script mix (`script:a.sql@2 tpcb@1`).
    workload: str | Sequence[str] | None = None
    defines: Sequence[str] = ()  # --define name=value for script workloads
    target: str | Sequence[str] | None = None
    clients: Sequence[str] = ()
    duration: str | None = None
    ramp: str | None = None  # unmeasured time before each run
    interval: str | None = None  # the width of the per-interval snapshots
    protocol: QueryProtocol | None = None
    connect: ConnectMode | None = None
    rate: float | None = None  # transactions/s over all clients
    threads: int | None = None
    max_tries: int | None = None
    transactions: int | None = None  # per client (pgbench -t); --duration is then a limit
    latency_limit: float | None = None  # ms (pgbench -L)
    transaction_timeout: str | None = None  # the client's own deadline per transaction
    routing: Routing | None = None  # how the targets' clients use their nodes
    log: bool = False  # a per-transaction log (pgbench -l)
    sampling_rate: float | None = None  # of the log (pgbench --sampling-rate)
    tls: TlsMode | None = None
    set_params: Sequence[str] = ()
    out: Path | None = None
    warmup: str | None = None
    seed: int | None = None
    repeat: int | None = None
    warmup_runs: int | None = None
    cooldown: str | None = None
    check: bool = False  # consistency conditions after each run (prepare.check: run)
    keep_going: bool = False  # a failed run does not stop the study (plan: keep_going)
    recipe: str | None = None
    quick: bool = False
    resume: Path | None = None
    ray: str | None = None  # scale-out: the Ray cluster's address
    workers: int | None = None
    workers_per_node: int | None = None
    capacity: CapacityFlags | None = None  # `dbscale capacity`: each point searched
    metrics_addr: str | None = None  # the study's OpenMetrics endpoint (plan: live.metrics)
    metrics_linger: bool = False  # it stays up after the study until Ctrl-C
    web: str | None = None  # the study's live page (plan: live.web)
    explain: bool = False  # each run's top statements' plans (plan: statements.explain)
    threshold: Sequence[str] = ()  # objectives added to the plan's thresholds.checks
    baseline: str | None = None  # what `F * baseline` refers to (plan: thresholds.baseline)
    thresholds_strict: bool = False  # inconclusive counts as failed (plan: thresholds.strict)
    abort_on_fail: bool = False  # stop once a threshold is clearly broken (plan: thresholds.)
    abort_grace: str | None = None  # ... but not before this (plan: thresholds.grace)

    @property
    def targets(self) -> list[str]:
        if self.target is None:
            return []
        return [self.target] if isinstance(self.target, str) else list(self.target)

    @property
    def workload_words(self) -> list[str]:
        if self.workload is None:
            return []
        return [self.workload] if isinstance(self.workload, str) else list(self.workload)

    @property
    def single_workload(self) -> str | None:
        """The one workload word (None for the demo or a script mix)."""
        words = self.workload_words
        return words[0] if len(words) == 1 and not is_mix(words) else None

    @property
    def plan_path(self) -> Path | None:
        name = self.single_workload
        if name is None:
            return None
        if name.endswith(PLAN_SUFFIXES) or (Path(name).is_file() and "/" in name):
            return Path(name)
        return None


def assemble_document(options: RunOptions) -> tuple[PlanDocument, bool]:
    """The whole plan document the command line describes, and whether it came from the flags
    alone: its source (a plan file, a recipe, or a plain run), the shared targets file, the
    `--quick` variant, then the flags and `--set` pairs, each value with its origin. The study
    is built from it alone (plan/build.py)."""
    doc, plain = plan_document(options)
    include_targets_file(doc)  # targets from a shared targets.yaml
    if options.quick:
        apply_quick(doc)
    apply_flags(doc, options, plain=plain)
    return doc, plain


def plan_document(options: RunOptions) -> tuple[PlanDocument, bool]:
    """The plan document and whether it was built from the flags alone."""
    if any(not word.strip() for word in options.workload_words) or (
        options.workload is not None and not options.workload_words
    ):
        raise PlanError(
            "the workload is empty ('')",
            "name a workload (`dbscale workloads` lists them) or a plan file; `dbscale run` "
            "alone runs the demo",
        )
    if options.recipe is not None:
        if options.workload is not None:
            raise PlanError(
                f"--recipe {options.recipe} and {' '.join(options.workload_words)!r} both say "
                "what to run",
                "give a recipe, a plan file or a workload, not two",
            )
        return load_recipe(options.recipe), False
    path = options.plan_path
    if options.defines and not is_mix(options.workload_words):
        raise PlanError(
            "--define sets variables of script workloads",
            "run script files (`dbscale run script:FILE -D name=value`); a plan's script "
            "workload takes `defines:`",
        )
    if path is not None:
        return load_plan_file(path), False
    if options.quick:
        raise PlanError("--quick applies to recipes and plans with a `quick` section", None)
    return _plain_run_document(options), True


def _plain_run_document(options: RunOptions) -> PlanDocument:
    """A plain run's plan before its flags: one point, one run, nothing loaded. The demo is
    TPC-B at scale 10 on 1, 4 and 8 clients after a warm-up."""
    demo = options.workload is None
    words = options.workload_words
    workload: dict[str, Any] = {
        "name": options.single_workload or DEMO_WORKLOAD,
        "params": {**(DEMO_PARAMS if demo else {}), **parse_set(options.set_params)},
    }
    if is_mix(words):
        workload.update(
            name=SCRIPT_WORKLOAD, scripts=mix_entries(words), defines=parse_defines(options.defines)
        )
    data: dict[str, Any] = {
        "targets": [],
        "workload": workload,
        "load": {"clients": 1, "duration": DEMO_DURATION_S if demo else CLI_DURATION_S},
        "repeat": 1,
        "warmup_runs": 0,
        "cooldown": 0.0,
        "prepare": {"load": "never"},
    }
    if demo:
        if not options.clients:
            data["matrix"] = {"clients": list(DEMO_CLIENTS)}
        data["prepare"]["warmup"] = {"duration": DEMO_WARMUP_S}
    return PlanDocument(data, "command line", {(): "command line"})


def default_clients(family: WorkloadFamily, params: Mapping[str, Any]) -> int:
    """A plain run's clients when --clients is not given (once the catalog has named the
    workload's family): 1, except TPC-C's terminals: 10 per active warehouse with waits (the
    spec's), 1 per active warehouse without (the Cloud Report's); CH-benCHmark's the same plus
    its analytic streams (its last clients)."""
    if family is WorkloadFamily.CH:
        streams = params.get("analytic_streams", 1)
        try:
            extra = max(0, int(str(streams)))
        except ValueError:
            extra = 0  # the workload's own check reports the bad value
        return default_clients(WorkloadFamily.TPCC, params) + extra
    if family is not WorkloadFamily.TPCC:
        return 1
    active = params.get("active_warehouses") or params.get("warehouses") or 1
    wait = str(params.get("wait", True)).strip().lower() not in ("false", "0", "no", "off")
    try:
        count = max(1, int(str(active)))
    except ValueError:
        return 1  # the workload's own check reports the bad value
    return 10 * count if wait else count


def _load_flag_values(options: RunOptions) -> dict[str, object]:
    values: dict[str, object] = {
        "duration": options.duration, "ramp": options.ramp, "interval": options.interval,
        "protocol": options.protocol,
        "connect": options.connect, "rate": options.rate, "threads": options.threads,
        "max_tries": options.max_tries, "tls": options.tls, "seed": options.seed,
        "transactions": options.transactions, "latency_limit": options.latency_limit,
        "transaction_timeout": options.transaction_timeout,
        "log": True if options.log else None, "sampling_rate": options.sampling_rate,
    }  # fmt: skip
    if options.transactions is not None and options.duration is None:
        values["duration"] = f"{int(MAX_DURATION_S)}s"  # counted runs end by themselves
    return {k: (v.value if isinstance(v, Enum) else v) for k, v in values.items() if v is not None}


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
    hosts = node_urls(url)
    if len(hosts) > 1:
        return {"name": name, "url": hosts[0], "more_urls": hosts[1:]}
    return {"name": name, "url": url}


def apply_quick(doc: PlanDocument) -> None:
    quick = doc.get(("quick",))
    if not isinstance(quick, dict) or not quick:
        raise PlanError(f"{doc.source} has no quick variant (a `quick` section)", None)
    origin = f"{doc.where(('quick',))} (quick)"
    for key, value in quick.items():
        doc.set(split_set_path(str(key)), value, origin)


def apply_flags(doc: PlanDocument, options: RunOptions, *, plain: bool) -> None:
    """The command line's values over the plan document, each remembering its flag, so the
    plan's validation names the flag a bad value came from. A plain run's `--set` pairs are
    its workload's parameters (already in its document); a plan's may set any plan field."""
    if options.targets:
        _override_targets(doc, options.targets)
    if options.routing is not None:
        _set_routing(doc, options.routing)
    clients = parse_clients(options.clients)
    if clients:
        _set_load(doc, "clients", clients, option_name("clients"))
    for name, value in _load_flag_values(options).items():
        _set_load(doc, name, [value], option_name(name))
    if options.warmup is not None and is_zero_duration(options.warmup):
        doc.set(("prepare", "warmup"), None, "command line (--warmup 0: no warm-up run)")
    elif options.warmup is not None:
        doc.set(("prepare", "warmup", "duration"), options.warmup, "command line (--warmup)")
    for key, value, flag in (
        ("repeat", options.repeat, "--repeat"),
        ("warmup_runs", options.warmup_runs, "--warmup-runs"),
        ("cooldown", options.cooldown, "--cooldown"),
    ):
        if value is not None:
            doc.set((key,), value, f"command line ({flag})")
    if options.check:
        doc.set(("prepare", "check"), "run", "command line (--check)")
    if options.keep_going:
        doc.set(("keep_going",), True, "command line (--keep-going)")
    if options.metrics_addr is not None:
        doc.set(("live", "metrics"), options.metrics_addr, "command line (--metrics-addr)")
    if options.web is not None:
        doc.set(("live", "web"), options.web, "command line (--web)")
    if options.metrics_linger:
        doc.set(("live", "linger"), "forever", "command line (--metrics-linger)")
    if options.explain:
        doc.set(("statements", "explain"), True, "command line (--explain)")
    _set_thresholds(doc, options)
    for key, value, flag in (
        ("ray", options.ray, "--ray"),
        ("workers", options.workers, "--workers"),
        ("per_node", options.workers_per_node, "--workers-per-node"),
    ):
        if value is not None:
            doc.set(("scale_out", key), value, f"command line ({flag})")
    if (options.ray is not None or options.workers_per_node is not None) and doc.get(
        ("scale_out", "workers")
    ) is None:
        raise doc.error(("scale_out",), "--ray and --workers-per-node need --workers N",
                        "e.g. --ray HEAD:6379 --workers 2")  # fmt: skip
    if not plain:
        for pair in options.set_params:
            _apply_set(doc, pair)
    if options.capacity is not None:
        _set_capacity(doc, options.capacity)


def _set_thresholds(doc: PlanDocument, options: RunOptions) -> None:
    """--threshold lines join the plan's `thresholds`; the other flags set its fields."""
    given = doc.get(("thresholds",))
    if isinstance(given, str | list):  # the plan's short form: the list alone
        doc.set(("thresholds",), {"checks": [given] if isinstance(given, str) else given},
                "plan")  # fmt: skip
    if options.threshold:
        checks = list(doc.get(("thresholds", "checks"), []) or [])
        doc.set(("thresholds", "checks"), [*checks, *options.threshold],
                "command line (--threshold)")  # fmt: skip
    for key, value, flag in (
        ("baseline", options.baseline, "--baseline"),
        ("strict", options.thresholds_strict or None, "--thresholds-strict"),
        ("abort_on_fail", options.abort_on_fail or None, "--abort-on-fail"),
        ("grace", options.abort_grace, "--abort-grace"),
    ):
        if value is not None:
            doc.set(("thresholds", key), value, f"command line ({flag})")


def _set_capacity(doc: PlanDocument, flags: CapacityFlags) -> None:
    """`dbscale capacity`'s flags as the plan's `capacity:` section (over a plan's own)."""
    doc.command = "capacity"
    for key, value in flags.given().items():
        doc.set(("capacity", key), value, f"command line (--{key.replace('_', '-')})")
    if doc.get(("capacity", "slo")) is None:  # refused by the section's model, naming --slo
        doc.set(("capacity", "slo"), [], "command line (--slo)")


def _set_routing(doc: PlanDocument, routing: Routing) -> None:
    """`--routing` for every target of the plan (or the command line's)."""
    listed = doc.get(("targets",))
    if not isinstance(listed, list) or not listed:
        raise PlanError(
            "--routing needs a target of several nodes",
            "give --target URL1,URL2,... or a plan target with nodes",
        )
    for i, target in enumerate(listed):
        if isinstance(target, dict):
            doc.set(("targets", i, "routing"), routing.value, "command line (--routing)")


def _override_targets(doc: PlanDocument, raw_targets: Sequence[str]) -> None:
    """`--target` replaces the plan's targets; one with a plan target's name keeps that target's
    other fields (socket_dir, pooled_url, ...), as does a lone unnamed one for a lone target. A
    `url: local` target (a recipe's quick sizes on this machine) lends only its name to a server
    given by URL: its sizes, confinement and example prices describe this machine, not that one."""
    listed = doc.get(("targets",)) or []
    # A malformed `targets` is replaced whole; the plan's schema would refuse it anyway.
    planned = [t for t in listed if isinstance(t, dict)] if isinstance(listed, list) else []
    by_name = {item_name(t): t for t in planned}
    entries = []
    for i, raw in enumerate(raw_targets):
        entry = _target_entry(raw, i, len(raw_targets))
        named = _split_target(raw)[0] is not None
        base = (
            by_name.get(entry["name"])
            if named
            else (planned[0] if len(planned) == 1 and len(raw_targets) == 1 else None)
        )
        private = ("local", "local-cluster")
        if base and base.get("url") in private and entry.get("url") not in private:
            base = {"name": base["name"]}
        entries.append(
            {**(base or {}), **entry, **({"name": base["name"]} if base and not named else {})}
        )
    doc.set(("targets",), entries, "command line (--target)")


def _set_load(doc: PlanDocument, name: str, values: list[Any], flag: str) -> None:
    origin = f"command line ({flag})"
    matrix = doc.get(("matrix",))
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
        if isinstance(doc.get(("workloads",)), list):
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
            names = [item_name(item) for item in node]
            if part not in names:
                raise doc.error(tuple(out), f"has no item named {part!r}")
            out.append(names.index(part))
        else:
            out.append(part)
    return tuple(out)
