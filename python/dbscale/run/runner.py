"""Runs a study: each step in order (data loads, warm-ups, measured runs, with the cooldown
between runs); each run goes to the native core once as JSON, its per-second intervals are polled
for the live display, and its result is appended to runs.jsonl the moment it ends. A resumed
study skips every run already recorded. Ctrl-C once asks the core to stop at the next transaction
boundary, twice to abandon transactions in flight; either way the partial run is recorded
(marked cancelled), the summary written, and the command exits 130.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rich.console import Console

from dbscale import core, interrupts
from dbscale.core import Run
from dbscale.core.answers import DataSummary
from dbscale.core.config import RunConfig, TransactionLogConfig
from dbscale.errors import (
    Cancelled,
    DbscaleError,
    InconsistentDataError,
    NotPreparedError,
    ResultsError,
    RunError,
    UncheckedError,
)
from dbscale.observe import StudyObserver
from dbscale.plan.micro_steps import MicroStep
from dbscale.plan.study import PrepareStep, RunStep, Step, Study, data_loads, estimate_s
from dbscale.results.cost import add_price_performance
from dbscale.results.cost_tables import print_price_performance
from dbscale.results.directory import ResultsDir, RunMeta, make_record
from dbscale.results.expectations import flag_contradictions
from dbscale.results.micro_records import (
    MicroFigureSummary,
    append_micro,
    micro_summary,
    read_micro,
)
from dbscale.results.points import FigureCache, PointSummary, SummarySettings, summarize_points
from dbscale.results.record import (
    ConsistencySection,
    RunRecord,
    StudyPlace,
    consistency_section,
)
from dbscale.run import data
from dbscale.run.console import compact_output, print_points, print_run, print_summary
from dbscale.run.fault_driver import FaultDriver
from dbscale.run.limits import print_limits, print_stall, print_verdict
from dbscale.run.micro_step import print_micro_record, print_micro_summary, run_micro_step
from dbscale.run.one_run import RunHandle, RunOutcome, run_one
from dbscale.run.output_format import OutputFormat
from dbscale.run.progress import RunProgress, RunSlot
from dbscale.run.resume_checks import (
    check_micro_resumable,
    check_resumable,
    done_run_keys,
    refused_hint,
    saturated_workers,
)
from dbscale.run.study_output import study_plan_json
from dbscale.run.target_limits import read_and_warn
from dbscale.targets import OpenTarget
from dbscale.targets.cluster import LocalCluster
from dbscale.targets.facts import load_target_records
from dbscale.targets.lifecycle import TargetFailedError
from dbscale.targets.spec import target_info

if TYPE_CHECKING:
    from dbscale.scaleout.pool import WorkerPool


@dataclass
class PlanOutcome:
    records: list[RunRecord] = field(default_factory=list)


class StudyRunner:
    """Executes the pending steps of a study against opened targets."""

    def __init__(
        self,
        study: Study,
        opened: Mapping[str, OpenTarget],
        *,
        results: ResultsDir,
        progress: RunProgress,
        out: Console,
        version: str,
        output_format: OutputFormat = OutputFormat.AUTO,
    ) -> None:
        self.study, self.opened, self.results = study, opened, results
        self.progress, self.out, self.version = progress, out, version
        self.output_format = output_format
        self.settings = SummarySettings(
            confidence=study.plan.statistics.confidence,
            cv_threshold_pct=study.plan.statistics.cv_threshold_pct,
        )
        self.cache = FigureCache()
        self.loaded: set[tuple[str, str]] = set()  # (target, data set) loaded by this process
        self.failed_targets: dict[str, str] = {}  # target name -> why it was skipped
        self.limits_read: set[str] = set()  # targets whose limits were read
        self.observer = StudyObserver(results.path)  # host facts once, host.json
        self.micro = read_micro(results.path)  # the micro steps recorded so far
        self.pool: WorkerPool | None = None  # scale_out: the study's workers, started once
        # A failed run is recorded and the next goes on (a capacity search: a failed level).
        self.keep_going = study.plan.keep_going

    def run(self) -> PlanOutcome:
        outcome = PlanOutcome()
        check_resumable(self.study, self.results.records)
        check_micro_resumable(self.study, self.micro)
        done = done_run_keys(self.results.records) | {m.key for m in self.micro}
        pending = self.study.pending(done)
        total = sum(isinstance(s, RunStep) for s in self.study.steps)
        remaining = [s for s in pending if isinstance(s, RunStep)]
        index = total - len(remaining)
        self.results.write_plan(study_plan_json(self.study))
        cooldown_s = self.study.plan.cooldown
        try:
            for position, step in enumerate(pending):
                if not self._target_entered(step):  # its hooks or server failed: skip it
                    continue
                if isinstance(step, PrepareStep):
                    self._prepare(step)
                    continue
                if isinstance(step, MicroStep):
                    self._micro(step)
                    continue
                if index > total - len(remaining) and cooldown_s > 0:
                    self.progress.note(f"cooldown {cooldown_s:g} s")
                    time.sleep(cooldown_s)
                index += 1
                ahead = pending[position:]
                eta = estimate_s(ahead, cooldown_s) + sum(
                    load.seconds for load in data_loads(ahead, "fresh")[0]
                )
                record = self.run_step(step, index, total, eta)
                outcome.records.append(record)
        finally:
            if self.results.records:
                self._final_summary(failing=sys.exc_info()[1] is not None)
                print_summary(self.out, outcome.records, self.results.path)
                print_limits(self.out, outcome.records)
                points = self._points()
                print_points(self.out, points)
                print_price_performance(self.out, points)
            print_micro_summary(self.out, self._micro_rows())
            if self.pool is not None:
                self.pool.close()
        failed = [r for r in outcome.records if r.verdict.status == "failed"]
        if failed:  # only with keep_going: otherwise the first failure stopped the study
            keys = ", ".join(r.run_key or r.group_key for r in failed[:5])
            more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
            raise RunError(
                f"{len(failed)} of {len(outcome.records)} runs failed ({keys}{more}); the first: "
                f"{failed[0].verdict.message}",
                "the other points ran (keep_going); the failed runs are in runs.jsonl, marked "
                "failed and left out of the statistics (--resume does not repeat them)",
            )
        outages = [r for r in outcome.records if r.verdict.status == "outage"]
        unchecked = [r for r in outcome.records if r.consistency and r.consistency.unfinished]
        if outages:
            raise RunError(
                f"{len(outages)} of {len(outcome.records)} runs had an outage: "
                f"{outages[0].verdict.message}",
                "the server stopped answering during those runs; they are in runs.jsonl, marked "
                "`outage`, and left out of the statistics (statistics.include_outages: true "
                "counts them); --resume does not repeat them"
                + (f"; {len(unchecked)} runs' data went unchecked" if unchecked else ""),
            )
        if unchecked:
            first = unchecked[0].consistency
            raise UncheckedError(
                f"{len(unchecked)} of {len(outcome.records)} runs' consistency check after the "
                f"run could not finish: {first.error if first else ''}",
                "those runs keep their own verdicts and are in runs.jsonl; fix what stopped the "
                "check, then check the data: dbscale check WORKLOAD --target URL",
            )
        return outcome

    def run_step(
        self,
        step: RunStep,
        index: int,
        total: int,
        eta_s: float | None,
        *,
        interval_histograms: bool = False,
    ) -> RunRecord:
        """One run of the study, recorded; `interval_histograms`: each second's histogram kept
        (a capacity level's seconds are judged from them)."""
        config = step.point.run_config(self.opened[step.point.target.name])
        if step.point.load.log:
            config = config.model_copy(update={"transaction_log": TransactionLogConfig(
                path=str(self.results.transaction_log(step.key)),
                sampling_rate=step.point.load.sampling_rate or 1.0,
            )})  # fmt: skip
        if interval_histograms:
            config = config.model_copy(update={"interval_histograms": True})
        slot = RunSlot(
            step.label, index, total, config.duration_s,
            None if config.transactions is not None else eta_s,
            workload=config.workload.name, family=step.point.family, clients=config.clients,
            transactions=config.transactions,
        )  # fmt: skip
        return self._run(step, config, slot)

    def enter(self, step: RunStep) -> bool:
        """Enters the step's target (hooks, local server, its limits read); False if it failed."""
        return self._target_entered(step)

    def finish(self, *, failing: bool) -> None:
        """The summary and the console's tables once a caller that ran steps itself is done."""
        if self.results.records:
            self._final_summary(failing=failing)
            print_summary(self.out, self.results.records, self.results.path)
        if self.pool is not None:
            self.pool.close()

    def _final_summary(self, *, failing: bool) -> None:
        """The summary once the study ends; when it ends on an error already, a summary that
        cannot be written is a warning, not a second error in place of the first."""
        try:
            self.write_summary()
        except ResultsError as exc:
            if not failing:
                raise
            self.out.print(f"warning: {exc.message}", highlight=False, soft_wrap=True)

    def _target_entered(self, step: Step) -> bool:
        """Enters the step's target (hooks, local server) if need be; False if it failed."""
        if isinstance(step, MicroStep):
            if step.target is None:  # the client
                return True
            name = step.target.name
        else:
            name = step.point.target.name
        try:
            opened = self.opened[name]
        except TargetFailedError as exc:
            if name not in self.failed_targets:
                self.failed_targets[name] = exc.message
                self.progress.note(f"skipping the points of {name}: {exc.message}")
            return False
        if name not in self.limits_read:  # once per target: what its runs will run into
            self.limits_read.add(name)
            points = [p for p in self.study.runnable_points if p.target.name == name]
            loads = self.study.plan.prepare.load != "never"
            read_and_warn(opened.url, name, points, self.progress.note, loads=loads)
        return True

    def _micro(self, step: MicroStep) -> None:
        self.progress.note(f"{step.label} (~{step.estimate_s:.0f} s) ...")
        try:
            record = run_micro_step(step, self.opened, version=self.version,
                                    note=self.progress.note)  # fmt: skip
        except KeyboardInterrupt:
            raise Cancelled(
                f"cancelled by {interrupts.cause()} during {step.label}; a micro-benchmark's "
                "figures need its whole run, so this one is not recorded",
                f"what ran before it is in {self.results.path}; dbscale run ... --resume "
                f"{self.results.path} runs it again and finishes the study",
            ) from None
        append_micro(self.results.path, record)
        self.micro.append(record)
        self.write_summary()
        print_micro_record(self.out, record, step.label)

    def _micro_rows(self) -> list[MicroFigureSummary]:
        return micro_summary(self.micro, self.study.plan.statistics.confidence)

    def _prepare(self, step: PrepareStep) -> None:
        point = step.point
        self.progress.note(f"{step.label} ...")
        config = point.run_config(self.opened[point.target.name])
        data.print_data_summary(self.progress.console, "load", self._load(config))
        self.loaded.add((point.target.name, point.data_label))

    def _workers(self) -> WorkerPool | None:
        """The study's load-generator workers (scale_out), started on first use."""
        settings = self.study.plan.scale_out
        if settings is not None and self.pool is None:
            from dbscale.scaleout.pool import WorkerPool

            self.pool = WorkerPool(settings, self.progress.note)
            self.observer.options = replace(
                self.observer.options, client_pids=self.pool.local_pids()
            )  # local workers' engine threads are dbscale's, not "other processes"
        return self.pool

    def _starter(self) -> Callable[[RunConfig], RunHandle]:
        """How a run starts: in this process's core, or over the study's workers."""
        pool = self._workers()
        return pool.start if pool is not None else Run

    def _load(self, config: RunConfig) -> DataSummary:
        """Loads a data set: here, or split over the study's workers."""
        pool = self._workers()
        return pool.load(config) if pool is not None else core.prepare(config)

    def _run(self, step: RunStep, config: RunConfig, slot: RunSlot) -> RunRecord:
        point = step.point
        start = self._starter()
        opened = self.opened[point.target.name]
        # Through the target's own pooler: the observer watches the server behind it.
        behind = opened.url if point.load.pooling and opened.pooled_url else None
        faults = self._fault_driver(step, opened)
        try:
            done = run_one(config, self.progress, slot, self.observer, start, behind, faults)
        except NotPreparedError as exc:
            mark = (point.target.name, point.data_label)
            if self.study.plan.prepare.load != "auto" or mark in self.loaded:
                raise
            self.progress.note(f"{point.target.name}: {exc.message}; loading {point.data_label}")
            data.print_data_summary(self.progress.console, "load", self._load(config))
            self.loaded.add(mark)
            done = run_one(config, self.progress, slot, self.observer, start, behind, faults)
        consistency, interrupted = self._check_after(config, done)
        record = make_record(
            done.native,
            RunMeta(
                started_at=done.started_at,
                ended_at=done.ended_at,
                config=config,
                warmup=step.warmup,
                dbscale_version=self.version,
                cancelled=done.cancelled,
                study=self._study_fields(step),
                observe=done.observe,
                consistency=consistency,
                count_outages=self.study.plan.statistics.include_outages,
                faults=done.faults,
            ),
        )
        self._keep(record, f"run {slot.index} ({step.label})")
        if done.faults and opened.cluster is not None:
            self._heal(opened.cluster)  # after the record is kept: a failure loses nothing
        print_run(self.out, record, step.label, self.output_format, point.family)
        if not compact_output(self.out, self.output_format):
            print_verdict(self.out, record)
        print_stall(self.out, record, step.label)
        for worker in saturated_workers(record):
            self.out.print(f"warning: {worker}", highlight=False, soft_wrap=True)
        if done.cancelled or interrupted:
            during = "the consistency check after" if interrupted else "during"
            raise Cancelled(
                f"cancelled by {interrupts.cause()} {during} run {slot.index} ({step.label})",
                f"what ran, the interrupted run included, is in {self.results.path}; "
                f"dbscale run ... --resume {self.results.path} finishes the study",
            )
        if (
            record.consistency is not None
            and not record.consistency.ok
            and not record.consistency.unfinished
        ):
            raise InconsistentDataError(
                f"run {slot.index} ({step.label}): {record.verdict.message}",
                "the run is recorded, marked failed; the lines above name the offending rows. "
                "Reload the data (`dbscale prepare`) before measuring again",
            )
        if record.worker_lost:  # the message names the worker, when and what is kept
            raise RunError(record.verdict.message, f"dbscale run ... --resume {self.results.path} "
                           "runs it again")  # fmt: skip
        if record.verdict.status == "failed":
            if self.keep_going:
                self.out.print(
                    f"warning: run {slot.index} ({step.label}) failed: {record.verdict.message}; "
                    "keep_going: the study goes on",
                    style="bold red", highlight=False, soft_wrap=True,
                )  # fmt: skip
                return record
            raise RunError(
                f"run {slot.index} ({step.label}) failed: {record.verdict.message}",
                refused_hint(record),
            )
        return record

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
            self.write_summary()
        except ResultsError as exc:
            raise ResultsError(
                f"{exc.message}; {run} is kept in runs.jsonl, and the study stopped before "
                "measuring a run it could not keep",
                exc.hint,
            ) from None

    def _check_after(
        self, config: RunConfig, done: RunOutcome
    ) -> tuple[ConsistencySection | None, bool]:
        """With `prepare.check: run`: the consistency check after a finished run, as the
        record's `consistency` section (None when not checked), and whether Ctrl-C cut it."""
        if self.study.plan.prepare.check != "run" or done.cancelled:
            return None, False
        self.progress.note("checking the data's consistency conditions ...")
        try:
            report = core.check(config)
        except KeyboardInterrupt:
            return None, True  # not checked: the record says nothing about consistency
        except DbscaleError as exc:
            return ConsistencySection(ok=False, error=exc.message), False
        return consistency_section(report), False

    def _study_fields(self, step: RunStep) -> StudyPlace:
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

    def _points(self) -> list[PointSummary]:
        points = flag_contradictions(
            summarize_points(self.results.records, self.settings, self.cache)
        )
        return add_price_performance(points, load_target_records(self.results.path))

    def write_summary(self) -> None:
        self.results.write_summary(
            extra={
                "study": {"name": self.study.plan.name, "source": self.study.source},
                "targets_failed": self.failed_targets,
                **(
                    {"micro": [r.model_dump(mode="json") for r in self._micro_rows()]}
                    if self.micro
                    else {}
                ),
                "host": self.observer.summary_host().model_dump(mode="json", exclude_none=True),
            },
            points=self._points(),
        )
