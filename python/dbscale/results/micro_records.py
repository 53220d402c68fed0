"""micro.jsonl: one line per micro-benchmark a study ran (CPU, disk, network, on a target's host
or on the client), appended and made durable the moment it ends, as runs are to runs.jsonl. A
record holds the step's key (a resumed study skips it), where it ran and in what shape (the
target's facts, the CPUs of a local size), the tool's whole result and its figures with their
samples. `micro_summary` gives each figure's statistics per host, the same ones a point's
throughput gets (median with its interval, mean, CV), pooled over the host's repetitions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from dbscale.errors import ResultsError
from dbscale.files import append_durable, json_value
from dbscale.micro.figures import Figure
from dbscale.micro.results import MicroWhere
from dbscale.results.points import throughput_summary

MICRO_FILE = "micro.jsonl"
HINT = "micro.jsonl holds one JSON object per line, as `dbscale run` writes it"


class MicroRecord(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    key: str
    kind: str  # cpu | disk | net
    place: str  # the target's name, or "client"
    repetition: int = 0
    started_at: str = ""
    ended_at: str = ""
    dbscale_version: str = ""
    target_info: dict[str, JsonValue] = Field(default_factory=dict)
    where: MicroWhere = Field(default_factory=MicroWhere)
    settings: dict[str, JsonValue] = Field(default_factory=dict)  # the plan's, for this kind
    result: dict[str, JsonValue] = Field(default_factory=dict)
    figures: dict[str, Figure] = Field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), separators=(",", ":"))

    @property
    def vcpus(self) -> int | None:
        value = self.target_info.get("vcpus")
        return value if isinstance(value, int) else None


def append_micro(directory: Path, record: MicroRecord) -> None:
    append_durable(directory / MICRO_FILE, record.to_json())


def read_micro(directory: Path) -> list[MicroRecord]:
    """The records of `directory/micro.jsonl` (none when it has none). A torn last line is
    skipped; any other line that is not a record is an error naming it."""
    path = directory / MICRO_FILE
    if not path.is_file():
        return []
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultsError(f"cannot read {path}: {exc.strerror or exc}", HINT) from None
    records = []
    for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        try:
            records.append(MicroRecord.model_validate(json_value(raw)))
        except ValidationError:
            raise ResultsError(f"{path}, line {number}: not a micro record (Validation)",
                               HINT) from None  # fmt: skip
        except ValueError as exc:
            raise ResultsError(f"{path}, line {number}: not a micro record ({exc})",
                               HINT) from None  # fmt: skip
    return records


class MicroFigureSummary(BaseModel):
    """One figure's statistics on one host, pooled over its repetitions (summary.json's
    `micro`)."""

    model_config = ConfigDict(frozen=True)

    place: str
    kind: str
    figure: str
    unit: str
    higher_is_better: bool
    vcpus: int | float | None
    samples: int
    median: float | None
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    cv_pct: float | None


def micro_summary(
    records: Sequence[MicroRecord], confidence: float = 0.95
) -> list[MicroFigureSummary]:
    """One row per host and figure: median, its interval, mean, CV and the samples' count."""
    pooled: dict[tuple[str, str, str], list[float]] = {}
    meta: dict[tuple[str, str, str], tuple[Figure, int | None]] = {}
    for record in records:
        for name, figure in record.figures.items():
            key = (record.place, record.kind, name)
            pooled.setdefault(key, []).extend(figure.values)
            meta.setdefault(key, (figure, record.vcpus))
    rows: list[MicroFigureSummary] = []
    for (place, kind, name), values in pooled.items():
        figure, vcpus = meta[(place, kind, name)]
        stats = throughput_summary(values, confidence)
        ci = stats.ci
        rows.append(MicroFigureSummary(
            place=place, kind=kind, figure=name, unit=figure.unit,
            higher_is_better=figure.higher_is_better, vcpus=vcpus,
            samples=len(values), median=stats.median, mean=stats.mean,
            ci_low=ci.low if ci else None, ci_high=ci.high if ci else None,
            ci_method=ci.method if ci else None, cv_pct=stats.cv_pct,
        ))  # fmt: skip
    return rows
