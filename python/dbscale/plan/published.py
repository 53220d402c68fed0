"""What the study a recipe reproduces published, in a form a measurement can be set against
(a plan's `published:` section): where it came from, and each finding as its own words plus,
when it states a shape, the shape. Absolute numbers differ from machine to machine, so shapes
are ratios between configurations (`ratio`: the runs with `axis` = `value` over those with
`axis` = `over`, published between `low` and `high`) or where a sweep peaks (`peak`: the value
of `axis` with the highest throughput, published as one of `values`). The report sets each
beside the measured one (report/published_section.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PublishedRatio(_Strict):
    axis: str
    value: str
    over: str
    low: float | None = Field(default=None, gt=0)  # None: "up to `high`"
    high: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> PublishedRatio:
        if self.low is not None and self.low > self.high:
            raise ValueError("a published ratio's low is above its high")
        return self


class PublishedPeak(_Strict):
    axis: str
    values: list[str] = Field(min_length=1)
    per: str | None = None  # the axis each peak is found along separately (e.g. target)


class PublishedFinding(_Strict):
    says: str = Field(min_length=1)
    ratio: PublishedRatio | None = None
    peak: PublishedPeak | None = None


class Published(_Strict):
    source: str = Field(min_length=1)  # the study and where it is (../shared/seeds/NNN)
    findings: list[PublishedFinding] = Field(min_length=1)
