"""One run over several workers, driven like a local run (`wait`, `poll`, `cancel`, `result`, the
interface of `core.Run`), so the runner, the live display and the records do not change:

1. The run is split into shares (split.py) and every worker prepares its own: it connects its
   clients and waits.
2. Barrier: each worker reports ready with a reading of its own monotonic clock. The coordinator
   notes when each answer arrived and the request's round trip. It picks a common start a little
   after the last arrival and sends each worker that instant in the worker's own clock (Rally's
   rule); the error is at most half that worker's round trip. That bound, and how late the
   instruction arrived, are kept per worker as its start skew.
3. While the run goes, every worker is polled: the poll brings its finished intervals (merged
   exactly, histogram by histogram, for the live display) and is the heartbeat. A worker that
   dies or does not answer within `HEARTBEAT_S` fails the run loudly, naming it; the others are
   stopped at their next transaction boundary and what they measured is kept. A worker is never
   restarted mid-run.
4. The workers' results are merged by the core (engine/merge.rs) into one record of the same
   shape as a local run's, plus `workers`: each worker's host, clients, totals, start skew, CPU
   use and histogram.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field

from dbscale import core
from dbscale.core.config import RunConfig
from dbscale.core.result import Interval, Verdict
from dbscale.errors import DbscaleError, RunError
from dbscale.scaleout.live import merge_intervals
from dbscale.scaleout.messages import (
    Finished,
    Polled,
    Ready,
    ScaledOutResult,
    Started,
    WorkerEntry,
    WorkerInfo,
)
from dbscale.scaleout.split import Share, split_run
from dbscale.scaleout.workers import Worker, WorkerLost, gather, raise_refusal

HEARTBEAT_S = 3.0  # a worker that does not answer a poll in this long is lost
READY_TIMEOUT_S = 300.0  # connecting every client of a share
START_MARGIN_S = 0.25  # the common start, after the last worker reported ready
RESULT_TIMEOUT_S = 60.0  # after the end: the drain's grace (10 s) and the result's assembly
SATURATED_PCT = 90.0  # a worker host busier than this limited the run


@dataclass
class WorkerState:
    worker: Worker
    share: Share
    info: WorkerInfo
    clock_ns: int = 0  # the worker's monotonic clock when it reported ready
    received_ns: int = 0  # the coordinator's, when that answer arrived
    rtt_ns: int = 0
    late_ms: float = 0.0
    intervals: list[Interval] = field(default_factory=list)
    ended: bool = False
    lost: str | None = None


class DistributedRun:
    """A run spread over `workers` (already started; `info` answered)."""

    def __init__(
        self,
        config: RunConfig,
        workers: Sequence[Worker],
        infos: Sequence[WorkerInfo],
        note: Callable[[str], None] = lambda _: None,
    ) -> None:
        seed = config.seed if config.seed is not None else secrets.randbits(63)
        self.config = config.model_copy(update={"seed": seed})
        shares = split_run(self.config, len(workers), seed)
        self.states = [WorkerState(w, s, i) for w, s, i in zip(workers, shares, infos,
                                                               strict=True)]  # fmt: skip
        self.note = note
        self.failure: str | None = None
        self.start_ns = 0
        self._emitted = 0
        self._prepare()
        self._start_together()

    # -- start ----------------------------------------------------------------------------

    def _prepare(self) -> None:
        pending = [s.worker.submit("prepare", s.share.config.to_core_json()) for s in self.states]
        answers = gather(pending, READY_TIMEOUT_S)
        try:
            raise_refusal(answers)
        except DbscaleError:
            self.cancel()
            raise

    def _start_together(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        waiting = list(self.states)
        while waiting:
            for state in list(waiting):
                sent = time.monotonic_ns()
                answer = state.worker.submit("ready").get(HEARTBEAT_S)
                if answer is None:
                    continue
                ready = Ready.model_validate(answer)
                if ready.ended or ready.clock_ns is None:
                    raise RunError(
                        f"{self._name(state)} ended before its clients connected",
                        "its result holds the reason; run it alone to see it",
                    )
                state.received_ns = time.monotonic_ns()
                state.rtt_ns = state.received_ns - sent
                state.clock_ns = ready.clock_ns
                waiting.remove(state)
            if waiting and time.monotonic() > deadline:
                self.cancel()
                raise RunError(
                    f"{self._name(waiting[0])} did not connect its clients in "
                    f"{READY_TIMEOUT_S:g} s",
                    "check the worker's reach of the target",
                )
            if waiting:
                time.sleep(0.05)
        margin_ns = max(int(START_MARGIN_S * 1e9), 4 * max(s.rtt_ns for s in self.states))
        self.start_ns = max(s.received_ns for s in self.states) + margin_ns
        pending = [(s, s.worker.submit("go", s.clock_ns + (self.start_ns - s.received_ns)))
                   for s in self.states]  # fmt: skip
        for state, answer in pending:
            state.late_ms = Started.model_validate(answer.get(HEARTBEAT_S)).late_ms

    # -- during the run (core.Run's interface) --------------------------------------------

    def wait(self, timeout_s: float) -> bool:
        """One poll of every worker (the heartbeat); True once all have ended."""
        until = time.monotonic() + timeout_s
        self._poll_workers()
        done = all(s.ended or s.lost for s in self.states)
        if not done:
            time.sleep(max(until - time.monotonic(), 0))
        return done

    def _poll_workers(self) -> None:
        live = [s for s in self.states if not s.ended and not s.lost]
        pending = [(s, s.worker.submit("poll")) for s in live]
        first_loss = self.failure is None
        for state, answer in pending:  # every answer first: a worker takes one request at a time
            try:
                polled = Polled.model_validate(answer.get(HEARTBEAT_S))
            except WorkerLost as exc:
                self._lose(state, exc.message)
                continue
            state.intervals.extend(polled.intervals)
            state.ended = polled.ended
        if first_loss and self.failure is not None:
            self.cancel()  # the others stop at their next transaction boundary

    def _lose(self, state: WorkerState, why: str) -> None:
        state.lost = why
        at = max(time.monotonic_ns() - self.start_ns, 0) / 1e9
        if self.failure is None:
            self.failure = (
                f"{self._name(state)} was lost {at:.1f} s into the run ({why}); the "
                "run stopped, and the other workers' measurements are kept"
            )
            # Said now, briefly; the run's error at its end says it whole, once.
            self.note(f"{self._name(state)}: lost ({why}); stopping the other workers")

    def poll(self) -> list[Interval]:
        """The intervals every live worker has finished, merged exactly, once each."""
        new = merge_intervals(
            [s.intervals for s in self.states if not s.lost], self.config.interval_s, self._emitted
        )
        self._emitted += len(new)
        return new

    def since_start(self) -> float | None:
        """Seconds since the workers' common measured start (their go, then the ramp)."""
        if self.start_ns == 0:
            return None
        return (time.monotonic_ns() - self.start_ns) / 1e9 - self.config.ramp_s

    def cancel(self) -> None:
        for state in self.states:
            if not state.lost:
                with suppress(DbscaleError):
                    state.worker.submit("cancel").get(HEARTBEAT_S)

    # -- the end --------------------------------------------------------------------------

    def result(self) -> ScaledOutResult:
        while not self.wait(0.2):
            pass
        live = [s for s in self.states if not s.lost]
        pending = [(s, s.worker.submit("result")) for s in live]
        results: list[tuple[WorkerState, Finished]] = []
        for state, answer in pending:
            try:
                results.append((state, Finished.model_validate(answer.get(RESULT_TIMEOUT_S))))
            except WorkerLost as exc:
                self._lose(state, exc.message)
        if not results:
            raise RunError(self.failure or "no worker finished the run", "see the workers' hosts")
        merged = core.merge_worker_results(self.config, [f.result for _, f in results])
        entries = [self._worker_entry(s, f) for s, f in results]
        entries += [self._worker_entry(s, None) for s in self.states if s.lost]
        fields = merged.model_dump(exclude_unset=True)
        fields.update(config_workers=len(self.states), workers=entries)
        if self.failure is not None:
            # Stopped by the coordinator, not by the person: a failed run, not a cancelled one.
            fields["cancelled"] = False
            fields["verdict"] = Verdict(status="failed", message=self.failure)
            fields["worker_lost"] = True
        return ScaledOutResult.model_validate(fields)

    def _worker_entry(self, state: WorkerState, finished: Finished | None) -> WorkerEntry:
        share, info = state.share, state.info
        placed = {
            "worker": share.worker + 1,
            "name": state.worker.name,
            "host": info.host,
            "pid": info.pid,
            "node_ip": info.node_ip,
            "node_id": info.node_id,
            "cpus": info.cpus,
            "first_client": share.first_client,
            "clients": share.clients,
            "seed": share.config.seed,
            "start_skew_bound_ms": round(state.rtt_ns / 2e6 + state.late_ms, 3),
            "start_late_ms": round(state.late_ms, 3),
        }
        if finished is None:
            # What it measured until it was lost: the intervals its polls brought, with their
            # histograms (its totals died with it).
            return WorkerEntry(
                **placed,
                lost=state.lost,
                intervals=list(state.intervals),
                transactions_received=sum(i.transactions for i in state.intervals),
            )
        native, busy = finished.result, finished.host_cpu_busy_pct
        return WorkerEntry(
            **placed,
            threads=native.threads,
            transactions=native.transactions,
            tps=native.tps,
            failed=native.failed,
            errors=native.errors.total,
            latency_ms=native.latency_ms,
            client_cpu_s=native.client_cpu_s,
            host_cpu_busy_pct=round(busy, 1) if busy is not None else None,
            saturated=busy is not None and busy > SATURATED_PCT,
            histogram=native.histogram,
        )

    def _name(self, state: WorkerState) -> str:
        return state.worker.name
