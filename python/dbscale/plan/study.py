"""A study: the plan's points, resolved, and the ordered steps that run them. Data sets (a
workload with its parameters) run one after another; within one, repetitions are interleaved
(A B C A B C ...) so drift cannot pass for a difference. Each run has a key (point key plus
repetition, or warm-up index) so an interrupted study resumes without losing or repeating a run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from dbscale.core.config import (
    RunConfig,
    ScriptSource,
    TargetConfig,
    WorkloadConfig,
    make_run_config,
)
from dbscale.errors import InternalError
from dbscale.modes import TlsMode, WorkloadFamily
from dbscale.plan.faults import FaultStep
from dbscale.plan.load_estimate import LoadEstimate, estimate_load
from dbscale.plan.micro_steps import MicroStep, client_steps, target_steps
from dbscale.plan.schema import (
    LoadSettings,
    PlanSchema,
    Transport,
    default_protocol,
)
from dbscale.plan.scripts import scripts_digest
from dbscale.targets import OpenTarget
from dbscale.targets.sizes import shared_groups
from dbscale.targets.socket_dir import discover_socket_dir
from dbscale.targets.spec import TargetEntry
from dbscale.targets.url import socket_url_for
from dbscale.values import AxisValue, ParamValue, format_value

# Connecting, the pre-run vacuum and writing the record, per run, for the wall-time estimate.
RUN_OVERHEAD_S = 1.0
TLS_NEEDS_TCP = (TlsMode.REQUIRE, TlsMode.VERIFY_CA, TlsMode.VERIFY_FULL)


# The interval joined the load settings later: at its default it is left out of a point's
# fingerprint, so a study begun before it resumes as it was; any other value is in it.


@dataclass(frozen=True)
class Point:
    """One configuration of the matrix: what runs, where, with which load."""

    key: str
    values: dict[str, AxisValue]
    target: TargetEntry
    workload: str  # the catalog name
    family: WorkloadFamily  # the catalog's kind of workload
    params: dict[str, ParamValue]
    load: LoadSettings
    skipped: str | None = None
    # The script workload's mix (files read) and --define variables.
    scripts: tuple[ScriptSource, ...] = ()
    defines: dict[str, str] = field(default_factory=dict)
    # Fault steps on the target's nodes during each measured run (a local cluster's).
    faults: tuple[FaultStep, ...] = ()

    @property
    def data_label(self) -> str:
        """The data set: the workload and its parameters."""
        if self.scripts:
            mix = ",".join(f"{s.name}@{s.weight}" for s in self.scripts)
            return f"{self.workload}({mix})"
        if not self.params:
            return self.workload
        inner = ",".join(f"{k}={format_value(v)}" for k, v in sorted(self.params.items()))
        return f"{self.workload}({inner})"

    @property
    def fingerprint(self) -> str:
        """Identifies the settings of the point (not the target's URL): a resumed study refuses
        runs recorded under the same key with other settings."""
        settings: dict[str, object] = {
            "target": self.target.name,
            "workload": self.workload,
            "params": self.params,
            # The seed is left out: repetitions draw their own.
            "load": self.load.model_dump(mode="json", exclude=self._unfingerprinted()),
        }
        if self.scripts:
            settings["scripts"] = scripts_digest(self.scripts, self.defines)
        if self.faults:
            settings["faults"] = [step.model_dump(mode="json") for step in self.faults]
        if self.target.routing is not None:
            settings["routing"] = self.target.routing.value
        text = json.dumps(settings, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def _unfingerprinted(self) -> set[str]:
        """The seed, and settings added after studies were recorded when they are at their
        default, so a study begun before them resumes as it was."""
        defaults = LoadSettings.model_fields
        later = ("interval_s", "latency_limit_ms", "log", "sampling_rate")
        at_default = {name for name in later if getattr(self.load, name) == defaults[name].default}
        return {"seed"} | at_default

    def url(self, opened: OpenTarget) -> str:
        if self.load.pooling:
            pooled = self.target.pooled_url or opened.pooled_url
            if pooled is None:
                raise InternalError(f"point {self.key}: pooling on, and no pooler was started")
            return pooled
        if self.load.transport is Transport.UNIX:
            if self.target.socket_url:
                return self.target.socket_url
            socket_dir = self.target.socket_dir or (
                str(opened.server.socket_dir)
                if opened.server is not None
                else discover_socket_dir(opened.url, self.target.name)
            )
            return socket_url_for(opened.url, socket_dir)
        return opened.url

    def run_config(self, opened: OpenTarget) -> RunConfig:
        load = self.load
        nodes = list(opened.more_urls) or self.target.more_urls
        return make_run_config(
            target=TargetConfig(
                url=self.url(opened),
                more_urls=nodes if load.transport is Transport.TCP else [],
                tls=load.tls,
                routing=self.target.routing,  # unset: the core's default for the cluster
            ),
            track_availability=self.target.node_count > 1 or bool(self.faults),
            workload=WorkloadConfig(
                name=self.workload,
                params=self.params,
                scripts=list(self.scripts),
                defines=self.defines,
            ),
            **{
                **load.settings(),
                "protocol": load.protocol or default_protocol(self.family),
            },
        )


@dataclass(frozen=True)
class RunStep:
    """One run. `kind`: measured, warmup (a point's pre-warm) or data-warmup (after loading)."""

    kind: str
    key: str
    point: Point
    repetition: int
    title: str | None = None  # the console's name for it, when not the point's (capacity levels)

    @property
    def warmup(self) -> bool:
        return self.kind != "measured"

    @property
    def duration_s(self) -> float:
        return self.point.load.duration_s

    @property
    def label(self) -> str:
        if self.title is not None:
            return self.title
        if self.kind == "measured":
            return f"{self.point.key} #{self.repetition + 1}"
        if self.kind == "warmup":
            return f"{self.point.key} warm-up"
        return f"data warm-up of {self.point.data_label} on {self.point.target.name}"


@dataclass(frozen=True)
class PrepareStep:
    """Loading a data set on a target. `serves`: the runs that use this load."""

    point: Point
    reason: str
    serves: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.reason}: {self.point.data_label} on {self.point.target.name}"


Step = RunStep | PrepareStep | MicroStep


@dataclass(frozen=True)
class Study:
    plan: PlanSchema
    points: list[Point]
    steps: list[Step]
    out_dir: Path
    source: str
    demo: bool = False
    command: str = "run"  # the dbscale command that runs it (`capacity` for its flags' plan)

    @property
    def resume_command(self) -> str:
        """What finishes the study after an interruption."""
        return f"dbscale {self.command} ... --resume {self.out_dir}"

    @property
    def runnable_points(self) -> list[Point]:
        return [p for p in self.points if p.skipped is None]

    @property
    def targets(self) -> list[TargetEntry]:
        seen: dict[str, TargetEntry] = {}
        for point in self.runnable_points:
            seen.setdefault(point.target.name, point.target)
        return list(seen.values())

    def pending(self, done: Collection[str]) -> list[Step]:
        """The steps still to run when the runs keyed in `done` are recorded. A load is
        repeated only if none of the runs it served has run yet."""
        steps: list[Step] = []
        for step in self.steps:
            if isinstance(step, RunStep | MicroStep):
                if step.key not in done:
                    steps.append(step)
            elif not any(key in done for key in step.serves):
                steps.append(step)
        return steps

    def points_by_key(self) -> dict[str, Point]:
        return {p.key: p for p in self.points}


def estimate_s(steps: Sequence[Step], cooldown_s: float) -> float:
    """Wall time of the runs (ramps included), cooldowns, per-run overhead and micro-benchmarks
    (data loading apart: `data_loads`)."""
    runs = [s for s in steps if isinstance(s, RunStep)]
    measured = sum(s.duration_s + s.point.load.ramp_s + RUN_OVERHEAD_S for s in runs)
    micro = sum(s.estimate_s for s in steps if isinstance(s, MicroStep))
    return measured + micro + cooldown_s * max(len(runs) - 1, 0)


def point_load(point: Point) -> LoadEstimate:
    return estimate_load(point.family, point.params, point.target.dialect)


def data_loads(steps: Sequence[Step], load: str) -> tuple[list[LoadEstimate], list[LoadEstimate]]:
    """The loads the steps will make (their PrepareSteps), and with `prepare: auto` the ones
    they may make: each data set of the runs on each target, loaded only if it is missing."""
    certain = [point_load(s.point) for s in steps if isinstance(s, PrepareStep)]
    possible: dict[tuple[str, str, float], LoadEstimate] = {}
    if load == "auto":
        for step in steps:
            if isinstance(step, RunStep) and step.kind != "warmup":
                estimate = point_load(step.point)  # run-only parameters do not count
                key = (step.point.target.name, step.point.workload, estimate.amount)
                possible.setdefault(key, estimate)
    return certain, list(possible.values())


def order_steps(plan: PlanSchema, points: list[Point]) -> list[Step]:
    """Data set by data set; within one, interleaved rounds (or each point's runs in a row)."""
    steps: list[Step] = []
    blocks: dict[tuple[str, str], list[Point]] = {}
    shared = shared_groups(p.target for p in points)  # sizes of one server: one block each
    for point in points:
        if point.skipped is None:
            own = point.target.name if point.target.exclusive_group in shared else ""
            blocks.setdefault((point.data_label, own), []).append(point)
    for block in blocks.values():
        steps.extend(_BlockOrder(plan, block).steps())
    return _with_micro(plan, _with_serves(steps))


def _with_micro(plan: PlanSchema, steps: list[Step]) -> list[Step]:
    """The micro steps: the client's first, each target's before the first step using it."""
    out: list[Step] = list(client_steps(plan.micro))
    seen: set[str] = set()
    for step in steps:
        if isinstance(step, RunStep | PrepareStep) and step.point.target.name not in seen:
            seen.add(step.point.target.name)
            out.extend(target_steps(plan.micro, step.point.target))
        out.append(step)
    return out


class _BlockOrder:
    def __init__(self, plan: PlanSchema, block: list[Point]) -> None:
        self.plan, self.block = plan, block
        self.fresh_load: set[str] = set()  # targets whose data was just (re)loaded

    def steps(self) -> Iterator[Step]:
        if self.plan.order == "interleaved":
            yield from self._interleaved()
        else:
            yield from self._sequential()

    def _interleaved(self) -> Iterator[Step]:
        targets = _unique_targets(self.block)
        prepare = self.plan.prepare
        for rnd in range(self.plan.repeat):
            for first in targets.values():
                loads = (rnd == 0 and prepare.load == "fresh") or (
                    rnd > 0 and prepare.reload == "round"
                )
                if loads:
                    yield self._prepare(
                        first, "load" if rnd == 0 else f"reload for round {rnd + 1}"
                    )
                if prepare.warmup is not None and (rnd == 0 or loads):
                    yield self._data_warmup(first, rnd)
            for point in self.block:
                if rnd == 0:
                    yield from self._warmups(point)
                yield from self._measured(point, rnd)

    def _sequential(self) -> Iterator[Step]:
        seen: set[str] = set()
        prepare = self.plan.prepare
        for point in self.block:
            if point.target.name not in seen:
                seen.add(point.target.name)
                if prepare.load == "fresh":
                    yield self._prepare(point, "load")
                if prepare.warmup is not None:
                    yield self._data_warmup(point, 0)
            yield from self._warmups(point)
            for rep in range(self.plan.repeat):
                if rep > 0 and prepare.reload == "round":
                    yield self._prepare(point, f"reload for repetition {rep + 1}")
                yield from self._measured(point, rep)

    def _prepare(self, point: Point, reason: str) -> PrepareStep:
        self.fresh_load.add(point.target.name)
        return PrepareStep(point, reason)

    def _measured(self, point: Point, rep: int) -> Iterator[Step]:
        name = point.target.name
        if self.plan.prepare.reload == "run" and name not in self.fresh_load:
            yield self._prepare(point, "reload before the run")
        self.fresh_load.discard(name)
        yield RunStep("measured", f"{point.key}#{rep}", point, rep)

    def _warmups(self, point: Point) -> Iterator[Step]:
        duration = self.plan.warmup_duration or point.load.duration_s
        warm = replace(point, load=point.load.model_copy(update={"duration_s": duration}))
        for i in range(self.plan.warmup_runs):
            yield RunStep("warmup", f"{point.key}#warmup{i}", warm, i)

    def _data_warmup(self, first: Point, rnd: int) -> RunStep:
        spec = self.plan.prepare.warmup
        assert spec is not None
        mine = [p for p in self.block if p.target.name == first.target.name]
        clients = spec.clients or max(p.load.clients for p in mine)
        load = first.load.model_copy(update={"duration_s": spec.duration, "clients": clients})
        point = replace(
            first,
            key=f"data-warmup:{first.target.name}:{first.data_label}",
            values={},
            workload=spec.workload or first.workload,
            params=first.params if spec.params is None else dict(spec.params),
            load=load,
        )
        return RunStep("data-warmup", f"{point.key}#{rnd}", point, rnd)


def _unique_targets(points: list[Point]) -> dict[str, Point]:
    first: dict[str, Point] = {}
    for point in points:
        first.setdefault(point.target.name, point)
    return first


def _with_serves(steps: list[Step]) -> list[Step]:
    """Fills each load's `serves` with the runs on its target until that target's next load."""
    served: dict[int, list[str]] = {}
    current: dict[str, int] = {}
    for i, step in enumerate(steps):
        if isinstance(step, MicroStep):
            continue
        name = step.point.target.name
        if isinstance(step, PrepareStep):
            current[name] = i
            served[i] = []
        elif name in current:
            served[current[name]].append(step.key)
    return [
        replace(step, serves=tuple(served[i])) if isinstance(step, PrepareStep) else step
        for i, step in enumerate(steps)
    ]


def run_counts(steps: list[Step]) -> Mapping[str, int]:
    counts = {"measured": 0, "warmup": 0, "data-warmup": 0, "prepare": 0, "micro": 0}
    for step in steps:
        if isinstance(step, MicroStep):
            counts["micro"] += 1
        else:
            counts["prepare" if isinstance(step, PrepareStep) else step.kind] += 1
    return counts
