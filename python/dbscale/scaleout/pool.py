"""A study's load-generator workers: started once (local processes, or Ray actors placed on the
cluster's nodes), checked to run this very dbscale, named by their host, used by every run of
the study, and stopped at its end."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from dbscale import __version__, core
from dbscale.core.answers import DataStep, DataSummary
from dbscale.core.config import LoadPart, RunConfig
from dbscale.errors import ConfigError
from dbscale.scaleout.coordinator import DistributedRun
from dbscale.scaleout.messages import WorkerInfo
from dbscale.scaleout.settings import ScaleOut
from dbscale.scaleout.workers import Pending, Worker, gather, process_workers, raise_refusal

START_TIMEOUT_S = 120.0
LOAD_TIMEOUT_S = 7 * 24 * 3600.0  # a load takes what it takes; a dead worker is noticed


class WorkerPool:
    def __init__(self, settings: ScaleOut, note: Callable[[str], None]) -> None:
        self.note = note
        self._ray: Any = None
        if settings.ray is not None:
            from dbscale.scaleout.ray_workers import RayPool

            self._ray = RayPool(settings.ray, settings.workers, settings.per_node)
            self.workers: list[Worker] = list(self._ray.workers)
        else:
            self.workers = process_workers(settings.workers)
        try:
            answers = gather([w.submit("info") for w in self.workers], START_TIMEOUT_S)
            self.infos = [WorkerInfo.model_validate(a) for a in answers]
            self._check_and_name()
        except BaseException:
            self.close()
            raise
        where = f"Ray at {settings.ray}" if settings.ray else "local processes"
        names = "; ".join(w.name for w in self.workers)
        note(f"{len(self.workers)} load-generator workers ({where}): {names}")

    def _check_and_name(self) -> None:
        mine = (__version__, core.version())
        for i, (worker, info) in enumerate(zip(self.workers, self.infos, strict=True)):
            node = f"{info.node_ip}, " if info.node_ip else ""
            worker.name = f"worker {i + 1} on {info.host} ({node}pid {info.pid})"
            theirs = (info.dbscale_version, info.core_version)
            if theirs != mine:
                raise ConfigError(
                    f"{worker.name} runs dbscale {theirs[0]} (core {theirs[1]}); this is "
                    f"{mine[0]} (core {mine[1]})",
                    "install the same dbscale on every node (results would not be comparable)",
                )

    def local_pids(self) -> tuple[int, ...]:
        """The worker processes on this machine (local ones, and Ray actors placed here)."""
        here = socket.gethostname()
        return tuple(i.pid for i in self.infos if i.host == here)

    def load(self, config: RunConfig) -> DataSummary:
        """The data loaded by the workers together: the schema by the first, each worker's part
        of the rows at once (TPC-C warehouses, sysbench tables, TPC-B account ranges), then the
        keys and statistics by the first."""
        started = time.monotonic()
        parts = len(self.workers)

        def ask(worker: Worker, phase: str, part: int) -> Pending:
            piece = LoadPart.model_validate({"phase": phase, "part": part, "parts": parts})
            return worker.submit("load", config.model_copy(update={"load_part": piece})
                                 .to_core_json())  # fmt: skip

        first = self.workers[0]
        answers = [ask(first, "schema", 0).get(LOAD_TIMEOUT_S)]
        raise_refusal(answers)
        rows = gather([ask(w, "rows", i) for i, w in enumerate(self.workers)], LOAD_TIMEOUT_S)
        raise_refusal(rows)
        finish = ask(first, "finish", 0).get(LOAD_TIMEOUT_S)
        raise_refusal([finish])
        steps: list[DataStep] = []
        total_rows = 0
        labelled = [(f"{w.name}: ", r) for w, r in zip(self.workers, rows, strict=True)]
        for label, answer in [("", answers[0]), *labelled, ("", finish)]:
            summary = DataSummary.model_validate(answer)
            steps += [DataStep(name=label + s.name, seconds=s.seconds) for s in summary.steps]
            total_rows += summary.rows or 0
        return DataSummary(steps=tuple(steps), rows=total_rows, seconds=time.monotonic() - started)

    def start(self, config: RunConfig) -> DistributedRun:
        return DistributedRun(config, self.workers, self.infos, self.note)

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        if self._ray is not None:
            self._ray.close()
