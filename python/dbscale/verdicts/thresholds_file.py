"""thresholds.json: each threshold's verdict per point, as the study's end judged it (the
report's headline, JUnit and `load_results` read it from here)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dbscale.files import read_model_file, write_atomic

THRESHOLDS_FILE = "thresholds.json"
THRESHOLDS_SCHEMA_VERSION = 1
PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ThresholdVerdict(_Model):
    """One threshold at one point."""

    threshold: str  # as written: `p99_ms < 20`
    metric: str
    unit: str
    point_key: str
    point: str  # the point in words: `tpcb scale=1 clients=4 @ main`
    verdict: str  # pass | fail | inconclusive
    limit: float | None  # None: the baseline had no value for this point
    baseline: float | None = None  # the baseline's value, for `F * baseline`
    value: float | None = None  # the median of the point's runs
    low: float | None = None  # its 95% interval (None with one run)
    high: float | None = None
    runs: int = 0
    why: str = ""  # the verdict in words

    @property
    def failed(self) -> bool:
        return self.verdict == FAIL


class ThresholdsFile(_Model):
    schema_version: int = THRESHOLDS_SCHEMA_VERSION
    strict: bool = False  # inconclusive counts as a failure
    baseline: str | None = None
    aborted: str | None = None  # the study was stopped early: why
    verdicts: list[ThresholdVerdict] = Field(default_factory=list)

    def counts_as_failed(self, verdict: ThresholdVerdict) -> bool:
        """A fail, or under `strict` an inconclusive verdict too."""
        return verdict.verdict == FAIL or (self.strict and verdict.verdict == INCONCLUSIVE)

    def failures(self) -> list[ThresholdVerdict]:
        return [v for v in self.verdicts if self.counts_as_failed(v)]

    @property
    def passed(self) -> bool:
        return not self.failures() and self.aborted is None


def write_thresholds(directory: Path, found: ThresholdsFile) -> Path:
    path = directory / THRESHOLDS_FILE
    write_atomic(path, json.dumps(found.model_dump(mode="json"), indent=2) + "\n")
    return path


def read_thresholds(directory: Path) -> ThresholdsFile | None:
    hint = ("it is written at the study's end: remove it and run the study again with "
            "--resume DIR (its runs are kept, and judged again)")  # fmt: skip
    return read_model_file(directory / THRESHOLDS_FILE, ThresholdsFile, hint)
