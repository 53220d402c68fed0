"""Walks a study: each pending step in order (data loads, micro-benchmarks, warm-ups, measured
runs, with the cooldown between runs and the study's ETA before each). One run's execution is
the executor's (executor.py), the summary the study summary's (study_summary.py), the targets'
entry the gate's (target_gate.py). A resumed study skips every step already recorded. Ctrl-C
once asks the core to stop at the next transaction boundary, twice to abandon transactions in
flight; either way the partial run is recorded (marked cancelled), the summary written, and the
command exits 130.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from rich.console import Console

from dbscale.observe import ObserveOptions, StudyObserver
from dbscale.plan.micro_steps import MicroStep
from dbscale.plan.study import PrepareStep, RunStep, Study, data_loads, estimate_s
from dbscale.results.directory import ResultsDir
from dbscale.results.record import RunRecord
from dbscale.run.executor import Position, RunExecutor
from dbscale.run.failure_policy import stop_after_study
from dbscale.run.load_generators import LoadGenerators
from dbscale.run.micro_step import keep_micro_step, print_micro_record
from dbscale.run.output_format import OutputFormat
from dbscale.run.progress import RunProgress
from dbscale.run.resume_checks import check_micro_resumable, check_resumable, done_run_keys
from dbscale.run.study_output import study_plan_json
from dbscale.run.study_summary import StudySummary
from dbscale.run.target_gate import TargetGate
from dbscale.run.thresholds import AbortWatch
from dbscale.run.watchers import StudyWatcher
from dbscale.targets import OpenTarget


class StudyRunner:
    """Executes the pending steps of a study against opened targets. `keep_going`: a failed
    run is recorded and the study goes on (a plan's keep_going, or a capacity search's);
    `abort`: thresholds that stop the study once clearly broken (`aborted` then says why)."""

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
        keep_going: bool = False,
        watcher: StudyWatcher | None = None,
        abort: AbortWatch | None = None,
    ) -> None:
        self.study, self.opened, self.results = study, opened, results
        self.abort = abort
        self.aborted: str | None = None  # why --abort-on-fail stopped the study
        self.progress, self.out, self.version = progress, out, version
        wanted = study.plan.statements
        options = ObserveOptions(statements=wanted.enabled, explain=wanted.explain)
        observer = StudyObserver(results.path, options=options)  # host facts once, host.json
        self.summary = StudySummary(study, results, observer, out)
        self.gate = TargetGate(study, opened, progress.note, self.summary.failed_targets)
        self.generators = LoadGenerators(study.plan.scale_out, observer, progress.note)
        self.executor = RunExecutor(
            study, opened, results=results, progress=progress, out=out, version=version,
            output_format=output_format, keep_going=keep_going, observer=observer,
            generators=self.generators, gate=self.gate, summary=self.summary, watcher=watcher,
            abort=abort,
        )  # fmt: skip

    def run(self) -> list[RunRecord]:
        """Every pending step; the runs this process recorded."""
        check_resumable(self.study, self.results.records)
        check_micro_resumable(self.study, self.summary.micro)
        done = done_run_keys(self.results.records) | {m.key for m in self.summary.micro}
        pending = self.study.pending(done)
        total = sum(isinstance(s, RunStep) for s in self.study.steps)
        first = total - sum(isinstance(s, RunStep) for s in pending)
        index = first
        self.results.write_plan(study_plan_json(self.study))
        cooldown_s = self.study.plan.cooldown
        ran: list[RunRecord] = []
        try:
            for position, step in enumerate(pending):
                if not self.gate.enter(step):  # its hooks or server failed: skip it
                    continue
                if isinstance(step, PrepareStep):
                    self.executor.prepare(step)
                    continue
                if isinstance(step, MicroStep):
                    self._micro(step)
                    continue
                if index > first and cooldown_s > 0:
                    self.progress.note(f"cooldown {cooldown_s:g} s")
                    time.sleep(cooldown_s)
                index += 1
                ahead = pending[position:]
                eta = estimate_s(ahead, cooldown_s) + sum(
                    load.seconds for load in data_loads(ahead, "fresh")[0]
                )
                ran.append(self.executor.run(step, Position(index, total, eta)))
                if self.abort is not None and (reason := self.abort.reason()) is not None:
                    self.aborted = reason
                    self.progress.note(reason)
                    break
        finally:
            self.summary.close(ran, failing=sys.exc_info()[1] is not None)
            self.generators.close()
        stop_after_study(ran)
        return ran

    @contextmanager
    def searching(self) -> Iterator[RunExecutor]:
        """For a capacity search, which runs its own levels through the executor: the study's
        plan written first (what --resume checks against), its summary and workers closed
        after, however the search ended."""
        self.results.write_plan(study_plan_json(self.study))
        failing = True
        try:
            yield self.executor
            failing = False
        finally:
            self.summary.close(self.results.records, failing=failing, tables=False)
            self.generators.close()

    def _micro(self, step: MicroStep) -> None:
        record = keep_micro_step(step, self.opened, results=self.results.path,
                                 resume=self.study.resume_command, version=self.version,
                                 note=self.progress.note)  # fmt: skip
        self.summary.micro.append(record)
        self.summary.write()
        print_micro_record(self.out, record, step.label)
