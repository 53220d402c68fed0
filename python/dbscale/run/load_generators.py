"""Where a study's load comes from: this process's native core, or the study's scale-out
workers (started on first use, once per study, closed when it ends). Runs start and data sets
load through here, so nothing else knows which."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from dbscale import core
from dbscale.core import Run
from dbscale.core.answers import DataSummary
from dbscale.core.config import RunConfig
from dbscale.observe import StudyObserver
from dbscale.run.one_run import RunHandle
from dbscale.scaleout.settings import ScaleOut

if TYPE_CHECKING:
    from dbscale.scaleout.pool import WorkerPool


class LoadGenerators:
    """The study's load generators: `scale_out` None is this process alone."""

    def __init__(
        self, scale_out: ScaleOut | None, observer: StudyObserver, note: Callable[[str], None]
    ) -> None:
        self.scale_out, self.observer, self.note = scale_out, observer, note
        self.pool: WorkerPool | None = None

    def _workers(self) -> WorkerPool | None:
        if self.scale_out is not None and self.pool is None:
            from dbscale.scaleout.pool import WorkerPool

            self.pool = WorkerPool(self.scale_out, self.note)
            self.observer.options = replace(
                self.observer.options, client_pids=self.pool.local_pids()
            )  # local workers' engine threads are dbscale's, not "other processes"
        return self.pool

    def starter(self) -> Callable[[RunConfig], RunHandle]:
        """How a run starts: in this process's core, or over the workers. The workers are
        started here, before the run's observation begins, so it counts their processes as
        the client's."""
        pool = self._workers()
        return pool.start if pool is not None else Run

    def load(self, config: RunConfig) -> DataSummary:
        """Loads a data set: here, or split over the workers."""
        pool = self._workers()
        return pool.load(config) if pool is not None else core.prepare(config)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
