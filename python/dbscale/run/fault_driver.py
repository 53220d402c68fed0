"""Carries out a run's fault steps on its cluster while the run goes on: a thread of its own
waits for the measured start (the core says when it is), then for each step's second, and acts
on the node the step names (resolving `primary` and `standby` at that moment). What each step
did and when is kept for the record; a step that fails is recorded with its error and the run
goes on (the run's own figures show what the cluster did).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from dbscale.errors import DbscaleError
from dbscale.plan.faults import FaultStep
from dbscale.results.fault_windows import FaultEvent
from dbscale.targets.cluster import LocalCluster

START_WAIT_S = 0.02


class FaultDriver:
    """`with FaultDriver(steps, cluster, clock):` acts while the block runs the run; `events`
    holds what was done. `clock()` is the run's seconds since its measured start (None until
    fixed)."""

    def __init__(
        self,
        steps: Sequence[FaultStep],
        cluster: LocalCluster,
        clock: Callable[[], float | None],
        note: Callable[[str], None] = lambda _text: None,
    ) -> None:
        self.steps, self.cluster, self.clock, self.note = list(steps), cluster, clock, note
        self.events: list[FaultEvent] = []
        # `primary` and `standby` as the cluster was when the run started: a scenario's
        # later steps (start the primary it stopped) mean the same nodes.
        self._roles: tuple[int | None, int | None] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drive, name="dbscale-faults", daemon=True)

    def __enter__(self) -> FaultDriver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=120)

    def _now(self) -> float | None:
        try:
            return self.clock()
        except DbscaleError:
            return None

    def _drive(self) -> None:
        if any(step.node in ("primary", "standby") for step in self.steps):
            # Asked before the first step is due (a look at every node takes a moment that must
            # not delay the step): `primary` and `standby` as the run found them.
            try:
                self._roles = (self.cluster.primary_index(), self._first_standby())
            except DbscaleError as exc:
                self.note(f"fault: the cluster's roles could not be read: {exc.message}")
        for step in self.steps:
            while True:
                now = self._now()
                if now is not None and now >= step.at_s:
                    break
                wait = START_WAIT_S if now is None else min(step.at_s - now, 0.05)
                if self._stop.wait(max(wait, 0.001)):
                    return
            self.events.append(self._act(step))

    def _act(self, step: FaultStep) -> FaultEvent:
        event = FaultEvent(action=step.action, node=step.node, planned_s=step.at_s)
        t0 = time.monotonic()
        began: float | None = None
        try:
            index = step.node_index(*(self._roles or (None, None)))
            if index is None:
                raise DbscaleError(f"no {step.node} node to {step.action}")
            name = self.cluster.node_name(index)
            event = event.model_copy(update={"node_name": name})
            action = {
                "kill": self.cluster.kill_node,
                "stop": self.cluster.stop_node,
                "start": self.cluster.restart_node,
                "promote": self.cluster.promote,
            }[step.action]
            t0 = time.monotonic()
            began = self._now()  # when the action itself began
            weakened = action(index)
            if weakened:
                event = event.model_copy(update={"weakened": weakened})
                self.note(f"fault: {weakened}")
            self.note(f"fault: {step.action} {name} at {began or 0:.2f} s "
                      f"({time.monotonic() - t0:.2f} s)")  # fmt: skip
        except DbscaleError as exc:
            event = event.model_copy(update={"error": exc.message})
            self.note(f"fault: {step.label} failed: {exc.message}")
        done = began if began is not None else self._now()
        return event.model_copy(update={"done_s": done, "took_s": round(time.monotonic() - t0, 4)})

    def _first_standby(self) -> int | None:
        live = [i for i, s in enumerate(self.cluster.states()) if s.role == "standby"]
        return live[0] if live else None
