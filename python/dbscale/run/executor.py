"""One run of a study, start to finish: its configuration from the point, its data loaded when
missing (`prepare: auto`), the run driven (run_one.py) with its fault steps, the consistency
check after it, its record appended to runs.jsonl at once, the cluster healed after faults,
its block on the console, and the failure policy (failure_policy.py). A capacity search runs
its levels through the same door (`run_level`)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from dbscale import core
from dbscale.core.config import RunConfig, TransactionLogConfig
from dbscale.errors import DbscaleError, NotPreparedError, ResultsError, TargetError
from dbscale.observe import StudyObserver
from dbscale.plan.study import PrepareStep, RunStep, Study
from dbscale.results.directory import ResultsDir, RunMeta, make_record
from dbscale.results.fault_windows import NodeRoles
from dbscale.results.record import ConsistencySection, RunRecord, StudyPlace, consistency_section
from dbscale.run import data
from dbscale.run.console import compact_output, print_run
from dbscale.run.failure_policy import stop_after_run
from dbscale.run.fault_driver import FaultDriver
from dbscale.run.limits import print_stall, print_verdict
from dbscale.run.load_generators import LoadGenerators
from dbscale.run.one_run import RunHandle, RunOutcome, run_one
from dbscale.run.output_format import OutputFormat
from dbscale.run.progress import RunProgress, RunSlot
from dbscale.run.resume_checks import saturated_workers
from dbscale.run.study_summary import StudySummary
from dbscale.run.target_gate import TargetGate
from dbscale.run.thresholds import AbortWatch
from dbscale.run.watchers import RunLabels, StudyWatcher, WatchedProgress
from dbscale.targets import OpenTarget
from dbscale.targets.cluster import LocalCluster
from dbscale.targets.spec import target_info

# The longest the consistency check after a run may take: minutes for a large TPC-C data set;
# past it the server has stopped answering, and the run keeps its verdict with the data unchecked.
CHECK_AFTER_RUN_LIMIT_S = 600.0


@dataclass(frozen=True)
class Position:
    """Where a run sits in the study: its number of `total`, and the study's remaining time
    (None: unknown, as for a capacity search's levels)."""

    index: int
    total: int
    eta_s: float | None = None


class RunExecutor:
    """Runs and records the study's runs; `keep_going`: a failed run is recorded and the study
    goes on (a capacity search's failed level)."""

    def __init__(
        self,
        study: Study,
        opened: Mapping[str, OpenTarget],
        *,
        results: ResultsDir,
        progress: RunProgress,
        out: Console,
        version: str,
        output_format: OutputFormat,
        keep_going: bool,
        observer: StudyObserver,
        generators: LoadGenerators,
        gate: TargetGate,
        summary: StudySummary,
        watcher: StudyWatcher | None = None,
        abort: AbortWatch | None = None,
    ) -> None:
        self.study, self.opened, self.results = study, opened, results
        self.watcher, self.abort = watcher, abort
        if watcher is not None:
            progress = WatchedProgress(progress, watcher)
        self.progress, self.out, self.version = progress, out, version
        self.output_format, self.keep_going = output_format, keep_going
        self.observer, self.generators, self.gate, self.summary = (
            observer, generators, gate, summary,
        )  # fmt: skip
        self.loaded: set[tuple[str, str]] = set()  # (target, data set) loaded by this process
        self.levels_run = 0

    # -- the small interface a capacity search uses (capacity/driver.py's LevelRunner) ---------

    @property
    def records(self) -> Sequence[RunRecord]:
        """Every run recorded in the results directory, those of earlier processes too."""
        return self.results.records

    @property
    def results_path(self) -> Path:
        return self.results.path

    def run_level(self, step: RunStep) -> RunRecord:
        """One level of a search, recorded with each second's histogram (its seconds are
        judged from them); TargetError when its target cannot be entered."""
        if not self.gate.enter(step):
            raise TargetError(f"target {step.point.target.name} could not be entered",
                              "see the messages above")  # fmt: skip
        self.levels_run += 1
        position = Position(self.levels_run, self.levels_run)
        return self.run(step, position, interval_histograms=True)

    # -- steps ---------------------------------------------------------------------------------

    def prepare(self, step: PrepareStep) -> None:
        point = step.point
        self.progress.note(f"{step.label} ...")
        config = point.run_config(self.opened[point.target.name])
        data.print_data_summary(self.progress.console, "load", self.generators.load(config))
        self.loaded.add((point.target.name, point.data_label))

    def run(
        self, step: RunStep, position: Position, *, interval_histograms: bool = False
    ) -> RunRecord:
        """One run of the study, recorded, then judged by the failure policy."""
        point = step.point
        opened = self.opened[point.target.name]
        config = self._config(step, opened, interval_histograms)
        slot = RunSlot(
            step.label, position.index, position.total, config.duration_s,
            None if config.transactions is not None else position.eta_s,
            workload=config.workload.name, family=point.family, clients=config.clients,
            transactions=config.transactions,
        )  # fmt: skip
        faulted = opened.cluster if not step.warmup and step.point.faults else None
        roles_before = cluster_roles(faulted) if faulted is not None else []
        if self.watcher is not None:
            self.watcher.run_began(self._labels(step, position, config))
        done = self._drive(step, opened, config, slot)
        if self.watcher is not None and not interval_histograms:
            done = _without_interval_histograms(done)  # kept for the watcher's buckets only
        roles = [] if faulted is None else [
            NodeRoles(node=name, before=before, after=after)
            for (name, before), (_, after) in zip(roles_before, cluster_roles(faulted),
                                                  strict=False)
        ]  # fmt: skip
        consistency, interrupted = self._check_after(config, done)
        record = make_record(done.native, RunMeta(
            started_at=done.started_at, ended_at=done.ended_at, config=config,
            warmup=step.warmup, dbscale_version=self.version, cancelled=done.cancelled,
            study=self._place(step), observe=done.observe, consistency=consistency,
            count_outages=self.study.plan.statistics.include_outages, faults=done.faults,
            node_roles=roles,
        ))  # fmt: skip
        run = f"run {slot.index} ({step.label})"
        self._keep(record, run)
        if self.watcher is not None:
            self.watcher.run_kept(record)
        if done.faults and opened.cluster is not None:
            self._heal(opened.cluster)  # after the record is kept: a failure loses nothing
        self._print(record, step)
        if done.stopped_by is not None and not interrupted and not done.interrupted_after:
            return record  # --abort-on-fail stopped it: the runner ends the study, exit 11
        stop_after_run(record, run, interrupted_check=interrupted,
                       interrupted_after=done.interrupted_after, results=self.results.path,
                       resume=self.study.resume_command, keep_going=self.keep_going,
                       out=self.out)  # fmt: skip
        return record

    def _config(self, step: RunStep, opened: OpenTarget, interval_histograms: bool) -> RunConfig:
        config = step.point.run_config(opened)
        if step.point.load.log:
            config = config.model_copy(update={"transaction_log": TransactionLogConfig(
                path=str(self.results.transaction_log(step.key)),
                sampling_rate=step.point.load.sampling_rate or 1.0,
            )})  # fmt: skip
        if interval_histograms or self.watcher is not None:
            config = config.model_copy(update={"interval_histograms": True})
        return config

    def _labels(self, step: RunStep, position: Position, config: RunConfig) -> RunLabels:
        point = step.point
        more = len(config.target.more_urls)  # a cluster's nodes, named as its fault steps name them
        nodes = tuple(f"n{i + 1}" for i in range(more + 1)) if more else ()
        return RunLabels(
            study=self.study.plan.name or self.results.path.name, point=point.key, run=step.key,
            target=point.target.name, phase="warmup" if step.warmup else "measured",
            clients=config.clients, rate_tps=config.rate_tps,
            runs_done=position.index - 1, runs_total=position.total, eta_s=position.eta_s,
            nodes=nodes, ramp_s=config.ramp_s,
        )  # fmt: skip

    def _drive(
        self, step: RunStep, opened: OpenTarget, config: RunConfig, slot: RunSlot
    ) -> RunOutcome:
        """The run itself; with `prepare: auto`, a missing data set is loaded once and the run
        started again."""
        point = step.point
        # Through the target's own pooler: the observer watches the server behind it.
        behind = opened.url if point.load.pooling and opened.pooled_url else None
        faults = self._fault_driver(step, opened)
        start = self.generators.starter()

        stop_when = None
        if self.abort is not None and not step.warmup:  # thresholds watched as the run goes
            stop_when = self.abort.in_run(step.point.key)

        def attempt() -> RunOutcome:
            return run_one(config, self.progress, slot, self.observer, start, behind, faults,
                           stop_when)  # fmt: skip

        try:
            return attempt()
        except NotPreparedError as exc:
            mark = (point.target.name, point.data_label)
            if self.study.plan.prepare.load != "auto" or mark in self.loaded:
                raise
            self.progress.note(f"{point.target.name}: {exc.message}; loading {point.data_label}")
            data.print_data_summary(self.progress.console, "load", self.generators.load(config))
            self.loaded.add(mark)
            return attempt()

    def _fault_driver(
        self, step: RunStep, opened: OpenTarget
    ) -> Callable[[RunHandle], FaultDriver] | None:
        """A measured run of a point with fault steps acts on its cluster's nodes."""
        cluster = opened.cluster
        if step.warmup or not step.point.faults or cluster is None:
            return None
        steps, note = step.point.faults, self.progress.note
        return lambda handle: FaultDriver(steps, cluster, handle.since_start, note)

    def _heal(self, cluster: LocalCluster) -> None:
        """After a run's fault steps: every node back in the cluster before the next run."""
        began = time.monotonic()
        states = cluster.heal()
        roles = ", ".join(f"{s.name} {s.role}" for s in states)
        self.progress.note(f"cluster whole again in {time.monotonic() - began:.1f} s ({roles})")

    def _check_after(
        self, config: RunConfig, done: RunOutcome
    ) -> tuple[ConsistencySection | None, bool]:
        """With `prepare.check: run`: the consistency check after a finished run, as the
        record's `consistency` section (None when not checked), and whether Ctrl-C cut it."""
        if self.study.plan.prepare.check != "run" or done.cancelled or done.interrupted_after:
            return None, False
        self.progress.note("checking the data's consistency conditions ...")
        try:
            report = core.check(config, CHECK_AFTER_RUN_LIMIT_S)
        except KeyboardInterrupt:
            return None, True  # not checked: the record says nothing about consistency
        except DbscaleError as exc:
            return ConsistencySection(ok=False, error=exc.message), False
        return consistency_section(report), False

    def _keep(self, record: RunRecord, run: str) -> None:
        """Appends the run to runs.jsonl, then the summary. A write that fails says which run
        it lost, or that the run is kept and the study stops before measuring another that
        could not be kept either."""
        try:
            self.results.append(record)
        except ResultsError as exc:
            # The record cannot be lost for good: it goes to standard output, one JSON line.
            print(record.to_json(), flush=True)
            raise ResultsError(
                f"{run} was measured, but its record could not be written: {exc.message}",
                'its record is the line of standard output that starts with {"workload": '
                f"once there is space, append that line to {self.results.runs_file}; {exc.hint}",
            ) from None
        try:
            self.summary.write()
        except ResultsError as exc:
            raise ResultsError(
                f"{exc.message}; {run} is kept in runs.jsonl, and the study stopped before "
                "measuring a run it could not keep",
                exc.hint,
            ) from None

    def _print(self, record: RunRecord, step: RunStep) -> None:
        print_run(self.out, record, step.label, self.output_format, step.point.family)
        if not compact_output(self.out, self.output_format):
            print_verdict(self.out, record)
        print_stall(self.out, record, step.label)
        for worker in saturated_workers(record):
            self.out.print(f"warning: {worker}", highlight=False, soft_wrap=True)

    def _place(self, step: RunStep) -> StudyPlace:
        point = step.point
        return StudyPlace(
            run_key=step.key,
            point_key=point.key,
            point=point.values,
            point_fingerprint=point.fingerprint,
            repetition=step.repetition,
            warmup_kind={"measured": None, "warmup": "point", "data-warmup": "data"}[step.kind],
            target_name=point.target.name,
            target_info=target_info(point.target).record(),
            study=self.study.plan.name,
        )


def _without_interval_histograms(done: RunOutcome) -> RunOutcome:
    """The run's outcome as an unwatched run records it: no histogram per second."""
    intervals = [type(i).model_validate(i.model_dump(exclude_unset=True, exclude={"detail"}))
                 for i in done.native.intervals]  # fmt: skip
    native = done.native.model_copy(update={"intervals": intervals})
    return dataclasses.replace(done, native=native)


def cluster_roles(cluster: LocalCluster) -> list[tuple[str, str]]:
    """Each node's name and role now ("unknown" where it cannot be read)."""
    try:
        return [(state.name, state.role) for state in cluster.states()]
    except DbscaleError:
        return [(cluster.node_name(i), "unknown") for i in range(len(cluster.nodes))]
