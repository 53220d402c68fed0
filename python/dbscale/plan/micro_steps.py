"""A study's micro-benchmark steps: on each target's host just before the first step that uses
the target (so a size of a local sweep is measured in its own shape, on its own CPUs), and on the
client before anything else. Each has a key (`micro:cpu:TARGET#0`) so a resumed study does not
repeat a recorded one.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from dbscale.micro.settings import MicroSettings
from dbscale.targets.spec import TargetEntry

CLIENT = "client"


@dataclass(frozen=True)
class MicroStep:
    """One micro-benchmark run: `kind` cpu, disk or net; `target` None on the client."""

    kind: str
    target: TargetEntry | None
    repetition: int
    settings: MicroSettings

    @property
    def place(self) -> str:
        return self.target.name if self.target is not None else CLIENT

    @property
    def key(self) -> str:
        return f"micro:{self.kind}:{self.place}#{self.repetition}"

    @property
    def label(self) -> str:
        where = f"the host of {self.place}" if self.target is not None else "the client"
        rep = f" #{self.repetition + 1}" if self.settings.repeat > 1 else ""
        return f"micro {self.kind} on {where}{rep}"

    @property
    def fingerprint(self) -> dict[str, JsonValue]:
        """The settings the step runs with; a resumed study refuses records made with others."""
        kind_settings = getattr(self.settings, self.kind)
        return kind_settings.model_dump(mode="json") if kind_settings is not None else {}

    @property
    def estimate_s(self) -> float:
        return self.settings.estimate_s(self.kind)


def client_steps(micro: MicroSettings | None) -> list[MicroStep]:
    if micro is None:
        return []
    return [
        MicroStep(kind, None, rep, micro)
        for rep in range(micro.repeat)
        for kind in micro.client_kinds()
    ]


def target_steps(micro: MicroSettings | None, target: TargetEntry) -> list[MicroStep]:
    if micro is None:
        return []
    return [MicroStep(kind, target, rep, micro) for rep in range(micro.repeat)
            for kind in micro.kinds()]  # fmt: skip
