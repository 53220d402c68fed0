"""A plan's `thresholds:` (docs/thresholds.md): objectives that fail a build. A list of
`METRIC OP BOUND` lines, or a mapping with the list under `checks` and how they are applied:

```yaml
thresholds:
  checks: [p99_ms < 20, tps >= 0.95 * baseline, errors_pct < 0.1]
  baseline: results/main        # or history:STORE
  strict: true                  # inconclusive counts as a failure
  abort_on_fail: true           # stop the study once one is clearly broken ...
  grace: 60s                    # ... but not in its first 60 s
```
Every line is parsed when the plan is read, so a bad one stops the study before anything runs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dbscale.core.config import SecondsOrZero
from dbscale.errors import ConfigError, HintedValueError
from dbscale.verdicts.expression import HINT, parse_threshold
from dbscale.verdicts.judge import ThresholdSet


class ThresholdSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    checks: list[str] = Field(min_length=1)
    baseline: str | None = None
    strict: bool = False
    abort_on_fail: bool = False
    grace: SecondsOrZero = 0.0

    @model_validator(mode="before")
    @classmethod
    def _list_alone(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"checks": [value]}
        return {"checks": value} if isinstance(value, list) else value

    @field_validator("checks")
    @classmethod
    def _parsed(cls, value: list[str]) -> list[str]:
        out = []
        for text in value:
            try:
                out.append(parse_threshold(str(text)).text)
            except ConfigError as exc:
                raise HintedValueError(exc.message, HINT) from None
        return out

    @model_validator(mode="after")
    def _baseline_named(self) -> ThresholdSettings:
        if self.baseline is None and any(parse_threshold(t).needs_baseline for t in self.checks):
            raise HintedValueError(
                "a threshold is relative to `baseline` but no baseline is named",
                "add thresholds.baseline: DIR (or history:STORE), or --baseline DIR",
            )
        return self

    def resolved(self) -> ThresholdSet:
        return ThresholdSet(tuple(parse_threshold(t) for t in self.checks), self.baseline,
                            self.strict)  # fmt: skip
