"""Whether a step's target can be used: entered on first use (its hooks run, its local server
started, by the study's TargetPool), and once per target the limits its runs will meet read and
warned about. A target that fails is skipped with its reason, kept for the summary."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dbscale.plan.micro_steps import MicroStep
from dbscale.plan.study import Step, Study
from dbscale.run.target_limits import read_and_warn
from dbscale.targets import OpenTarget
from dbscale.targets.lifecycle import TargetFailedError


class TargetGate:
    """Enters each step's target when it is first needed; `failed`: target name -> why."""

    def __init__(
        self,
        study: Study,
        opened: Mapping[str, OpenTarget],
        note: Callable[[str], None],
        failed: dict[str, str],
    ) -> None:
        self.study, self.opened, self.note, self.failed = study, opened, note, failed
        self.limits_read: set[str] = set()

    def enter(self, step: Step) -> bool:
        """Enters the step's target if need be; False when it failed (its steps are skipped)."""
        if isinstance(step, MicroStep):
            if step.target is None:  # the client
                return True
            name = step.target.name
        else:
            name = step.point.target.name
        try:
            opened = self.opened[name]
        except TargetFailedError as exc:
            if name not in self.failed:
                self.failed[name] = exc.message
                self.note(f"skipping the points of {name}: {exc.message}")
            return False
        if name not in self.limits_read:  # once per target: what its runs will run into
            self.limits_read.add(name)
            points = [p for p in self.study.runnable_points if p.target.name == name]
            loads = self.study.plan.prepare.load != "never"
            read_and_warn(opened.url, name, points, self.note, loads=loads)
        return True
