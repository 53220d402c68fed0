"""Fault steps: what happens to a cluster's nodes during a measured run. A step acts at a
second of the measured window (from its start, the ramp excluded) on one node: `kill` (SIGKILL
to every process of the server), `stop` (a clean shutdown), `start` (it comes back and rejoins)
or `promote` (PostgreSQL: a standby becomes the primary). A node is `n1`, `n2`, ... (or its
number), `primary` (the node taking writes when the run started) or `standby` (the first
standby then): `{stop: primary}` then `{start: primary}` restart the same node.

A plan gives one scenario as a list, or several by name (a mapping) that the `faults` axis of
its matrix picks from; an empty list is a run without faults (the baseline).

    faults:
      none: []
      primary-loss:
        - {at: 10s, kill: primary}
        - {at: 12s, promote: n2}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from dbscale.values import AxisValue, duration_seconds

if TYPE_CHECKING:
    from dbscale.plan.document import PlanLocator
    from dbscale.plan.schema import PlanSchema
    from dbscale.targets.spec import TargetEntry

FAULT_AXIS = "faults"
ACTIONS = ("kill", "stop", "start", "promote")
NODE_PATTERN = r"^(n?[1-9]|primary|standby)$"

At = Annotated[float, Field(ge=0, allow_inf_nan=False), BeforeValidator(duration_seconds)]
Action = Literal["kill", "stop", "start", "promote"]


class FaultStep(BaseModel):
    """One action at one second: written `{at: 10s, kill: n2}` (the action names its node)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at_s: At = Field(alias="at")
    action: Action
    node: str = Field(pattern=NODE_PATTERN)

    @model_validator(mode="before")
    @classmethod
    def _action_names_node(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "action" in data:
            return data
        named = [a for a in ACTIONS if a in data]
        if len(named) != 1:
            raise ValueError(
                "a fault step is {at: SECONDS, ACTION: NODE} with one ACTION of "
                + ", ".join(ACTIONS)
            )
        action = named[0]
        rest = {k: v for k, v in data.items() if k != action}
        return {**rest, "action": action, "node": str(data[action])}

    def node_index(self, primary: int | None, standby: int | None) -> int | None:
        """The node's index (0-based), `primary` and `standby` as the cluster says now."""
        if self.node == "primary":
            return primary
        if self.node == "standby":
            return standby
        return int(re.sub(r"^n", "", self.node)) - 1

    @property
    def label(self) -> str:
        return f"{self.action} {self.node} at {self.at_s:g}s"


Scenario = list[FaultStep]


def scenarios(raw: list[FaultStep] | dict[str, list[FaultStep]] | None) -> dict[str, Scenario]:
    """The plan's fault scenarios by name (a single list is the scenario `faults`)."""
    if raw is None:
        return {}
    if isinstance(raw, list):
        return {FAULT_AXIS: list(raw)}
    return {name: list(steps) for name, steps in raw.items()}


def fault_steps(
    locator: PlanLocator, plan: PlanSchema, values: Mapping[str, AxisValue], target: TargetEntry
) -> tuple[FaultStep, ...]:
    """A point's fault steps (its scenario's), checked against its target: dbscale must run
    the target's nodes (`url: local-cluster`), name nodes it has, and promote only
    PostgreSQL standbys."""
    named = scenarios(plan.faults)
    if not named:
        return ()
    path: tuple[str, ...]
    if isinstance(plan.faults, list):
        chosen, path = FAULT_AXIS, ("faults",)
    elif FAULT_AXIS in values:
        chosen, path = str(values[FAULT_AXIS]), ("faults", str(values[FAULT_AXIS]))
    else:
        chosen = next(iter(named))
        path = ("faults", chosen)
    steps = tuple(sorted(named[chosen], key=lambda s: s.at_s))
    if not steps:
        return ()
    if not target.is_local_cluster:
        raise locator.error(
            path,
            f"fault steps act on the nodes of a cluster dbscale runs; target {target.name} is not "
            "`url: local-cluster`",
            "give the scenario to a local-cluster target only (exclude the others in the matrix)",
        )
    engine = target.local.engine if target.local is not None else ""
    duration = plan.load.duration_s
    for step in steps:
        index = step.node_index(0, 1)
        if index is not None and index >= target.node_count:
            raise locator.error(
                path, f"{step.label}: target {target.name} has {target.node_count} node(s)"
            )
        if step.node in ("primary", "standby") and engine != "postgresql-sync":
            raise locator.error(
                path,
                f"{step.label}: every node of a {engine} cluster takes writes",
                "name the node: n1, n2, ...",
            )
        if step.action == "promote" and engine != "postgresql-sync":
            raise locator.error(path, f"{step.label}: only a PostgreSQL standby can be promoted")
        if step.at_s >= duration:
            raise locator.error(
                path, f"{step.label}: the measured run lasts {duration:g} s", "step earlier"
            )
    return steps
