"""summary.json's shape as a model, the one its published JSON Schema (schemas/) is made from:
each run's row, each point's statistics, the study, the targets that failed, the micro figures
and the host. `results/directory.py` writes it; this model reads it back."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dbscale.observe.host_facts import HostSummary
from dbscale.results.micro_records import MicroFigureSummary
from dbscale.results.points import PointSummary


class SummaryStudy(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str | None = None
    source: str | None = None


class SummaryFile(BaseModel):
    """summary.json. `runs`: one row per run (its key, point, load, totals and latency_ms);
    `points`: the per-point statistics summary.csv also holds."""

    model_config = ConfigDict(extra="allow")

    schema_version: int | None = None  # absent in files of dbscale before schemas
    runs: list[dict[str, Any]] = Field(default_factory=list)
    points: list[PointSummary] | None = None
    study: SummaryStudy | None = None
    targets_failed: dict[str, str] = Field(default_factory=dict)
    micro: list[MicroFigureSummary] | None = None
    host: HostSummary | None = None
