"""Price-performance, as the Cloud Report computes it: what the target costs per month (730 h),
compute and storage, on-demand and reserved (1-year), divided by its throughput in the workload's
headline metric (TPM = TPS x 60 for TPC-B and sysbench, tpmC for TPC-C). The throughput's
confidence interval is carried through: cost / TPM is decreasing in TPM, so the interval's high
throughput gives the low $/TPM and vice versa. Prices come from the target (its `prices`, with
their date and source) as recorded in targets/<name>.json; dbscale never fetches live prices.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from dbscale.targets.facts import TargetRecord
from dbscale.targets.spec import HOURS_PER_MONTH, Prices

if TYPE_CHECKING:
    from dbscale.results.points import PointSummary

SECONDS_PER_MINUTE = 60.0


@dataclass(frozen=True)
class MonthlyCost:
    """What one target costs per month, by part; None where a price or a size is missing."""

    currency: str
    compute_on_demand: float | None
    compute_reserved: float | None
    storage: float | None
    notes: tuple[str, ...] = ()

    def total(self, reserved: bool) -> float | None:
        compute = self.compute_reserved if reserved else self.compute_on_demand
        if compute is None:
            return None
        return compute + (self.storage or 0.0)

    def storage_share_pct(self, reserved: bool) -> float | None:
        total = self.total(reserved)
        if total is None or self.storage is None or total <= 0:
            return None
        return 100.0 * self.storage / total


def monthly_cost(
    prices: Prices,
    *,
    vcpus: int | float | None,
    memory_gib: float | None,
    storage_gb: float | None,
    ha: bool,
) -> MonthlyCost:
    """Compute (whole-instance price, or vCPU and GiB rates) and storage per month; HA
    multiplies both by `ha_multiplier`."""
    notes: list[str] = []
    scale = prices.ha_multiplier if ha else 1.0
    hourly = {
        reserved: _compute_per_hour(prices, reserved, vcpus, memory_gib, notes)
        for reserved in (False, True)
    }
    monthly = {k: v * scale * HOURS_PER_MONTH if v is not None else None for k, v in hourly.items()}
    storage: float | None = None
    if prices.storage_per_gb_month is not None and storage_gb is not None:
        storage = storage_gb * prices.storage_per_gb_month * scale
    elif prices.storage_per_gb_month is not None:
        notes.append("storage price given but no storage_gb: storage not counted")
    elif storage_gb is not None:
        notes.append("storage_gb given but no storage_per_gb_month: storage not counted")
    return MonthlyCost(prices.currency, monthly[False], monthly[True], storage, tuple(notes))


def _compute_per_hour(
    prices: Prices,
    reserved: bool,
    vcpus: int | float | None,
    memory_gib: float | None,
    notes: list[str],
) -> float | None:
    suffix = "_reserved" if reserved else ""
    whole = getattr(prices, f"compute_per_hour{suffix}")
    if whole is not None:
        return float(whole)
    per_vcpu = getattr(prices, f"vcpu_per_hour{suffix}")
    per_gib = getattr(prices, f"gib_per_hour{suffix}")
    if per_vcpu is None and per_gib is None:
        return None
    total = 0.0
    for rate, amount, what in ((per_vcpu, vcpus, "vcpus"), (per_gib, memory_gib, "memory_gib")):
        if rate is None:
            continue
        if amount is None:
            kind = "reserved" if reserved else "on-demand"
            notes.append(f"{what} unknown: {kind} compute not priced")
            return None
        total += rate * amount
    return total


@dataclass(frozen=True)
class Throughput:
    """A point's headline throughput per minute, with its interval (None: too few runs)."""

    metric: str  # "tpm" (TPS x 60) or "tpmC"
    median: float
    low: float | None = None
    high: float | None = None
    ci_of: str | None = None  # "median" (order statistics) or "mean" (t), when there is one
    confidence: float | None = None
    notes: tuple[str, ...] = field(default=())


def headline_throughput(point: PointSummary) -> Throughput | None:
    """TPM from a point summary's TPS (tpmC from its `tpmc` for TPC-C workloads)."""
    if point.tpmc is not None:
        source, metric, factor = point.tpmc, "tpmC", 1.0
    else:
        source, metric, factor = point.tps, "tpm", SECONDS_PER_MINUTE
    median = source.median
    if median is None or median <= 0:
        return None
    for ci_of, ci in (("median", source.median_ci), ("mean", source.mean_ci)):
        if ci is not None:
            return Throughput(
                metric, median * factor, ci.low * factor, ci.high * factor, ci_of, ci.confidence
            )
    return Throughput(metric, median * factor, notes=("no confidence interval: too few runs",))


class Bounds(BaseModel):
    """An interval of a derived figure; `high` None where it has no upper bound."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    low: float | None
    high: float | None


def cost_per_unit(monthly: float | None, tput: Throughput) -> tuple[float | None, Bounds | None]:
    """Monthly cost per unit of throughput, and its interval mapped through cost / x."""
    if monthly is None:
        return None, None
    value = monthly / tput.median
    if tput.low is None or tput.high is None:
        return value, None
    low = monthly / tput.high if tput.high > 0 else None
    high = monthly / tput.low if tput.low > 0 else None  # None: the interval reaches 0 TPM
    return value, Bounds(low=low, high=high)


class TpmFigures(BaseModel):
    """A point's throughput per minute, per vCPU when the target's size is known."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    metric: str
    median: float | None
    median_ci: Bounds | None
    ci_of: str | None
    vcpus: int | float | None
    per_vcpu: float | None
    per_vcpu_ci: Bounds | None


class CostFigures(BaseModel):
    """What the point's target costs per month and per unit of its throughput."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    currency: str
    price_date: str
    price_source: str
    hours_per_month: float
    compute_on_demand_per_month: float | None
    compute_reserved_per_month: float | None
    storage_per_month: float | None
    total_on_demand_per_month: float | None
    total_reserved_per_month: float | None
    storage_share_on_demand_pct: float | None
    storage_share_reserved_pct: float | None
    per_tpm_on_demand: float | None
    per_tpm_on_demand_ci: Bounds | None
    per_tpm_reserved: float | None
    per_tpm_reserved_ci: Bounds | None
    notes: list[str]


@dataclass(frozen=True)
class PricePerformance:
    tpm: TpmFigures | None = None
    cost: CostFigures | None = None


def _tpm_figures(tput: Throughput, vcpus: int | float | None) -> TpmFigures:
    def per_vcpu(value: float | None) -> float | None:
        return value / vcpus if vcpus and value is not None else None

    return TpmFigures(
        metric=tput.metric,
        median=_sig(tput.median),
        median_ci=_bounds(tput.low, tput.high),
        ci_of=tput.ci_of,
        vcpus=vcpus,
        per_vcpu=_sig(per_vcpu(tput.median)),
        per_vcpu_ci=_bounds(per_vcpu(tput.low), per_vcpu(tput.high)),
    )


def price_performance(
    point: PointSummary, target: TargetRecord | Mapping[str, Any]
) -> PricePerformance:
    """The `tpm` and `cost` figures of one point, from its target's record."""
    record = TargetRecord.model_validate(target)
    info = record.info
    tput = headline_throughput(point)
    vcpus = info.vcpus if info.vcpus is not None and info.vcpus > 0 else None
    tpm = _tpm_figures(tput, vcpus) if tput is not None else None
    prices = _prices(record.prices)
    cost = target_monthly_cost(record)
    if prices is None or cost is None:
        return PricePerformance(tpm=tpm)
    per_tpm = {
        label: cost_per_unit(cost.total(reserved), tput) if tput else (None, None)
        for label, reserved in (("on_demand", False), ("reserved", True))
    }
    notes = list(cost.notes) + list(tput.notes if tput else ())
    if tput is not None and tput.low is not None and tput.low <= 0:
        notes.append("the throughput interval reaches 0: $/TPM has no upper bound (more runs)")
    figures = CostFigures(
        currency=cost.currency,
        price_date=prices.date.isoformat(),
        price_source=prices.source,
        hours_per_month=HOURS_PER_MONTH,
        compute_on_demand_per_month=_money(cost.compute_on_demand),
        compute_reserved_per_month=_money(cost.compute_reserved),
        storage_per_month=_money(cost.storage),
        total_on_demand_per_month=_money(cost.total(reserved=False)),
        total_reserved_per_month=_money(cost.total(reserved=True)),
        storage_share_on_demand_pct=_round(cost.storage_share_pct(reserved=False), 2),
        storage_share_reserved_pct=_round(cost.storage_share_pct(reserved=True), 2),
        per_tpm_on_demand=_sig(per_tpm["on_demand"][0]),
        per_tpm_on_demand_ci=_sig_bounds(per_tpm["on_demand"][1]),
        per_tpm_reserved=_sig(per_tpm["reserved"][0]),
        per_tpm_reserved_ci=_sig_bounds(per_tpm["reserved"][1]),
        notes=notes,
    )
    return PricePerformance(tpm=tpm, cost=figures)


def target_monthly_cost(record: TargetRecord) -> MonthlyCost | None:
    """What the target costs a month, from its record's prices and size; None without prices."""
    prices = _prices(record.prices)
    if prices is None:
        return None
    info = record.info
    vcpus = info.vcpus if info.vcpus is not None and info.vcpus > 0 else None
    return monthly_cost(
        prices, vcpus=vcpus, memory_gib=info.memory_gib, storage_gb=info.storage_gb,
        ha=bool(info.ha),
    )  # fmt: skip


def add_price_performance(
    points: Sequence[PointSummary], targets: Mapping[str, TargetRecord]
) -> list[PointSummary]:
    """Point summaries with `tpm` and `cost` added where their target is known."""
    out = []
    for point in points:
        target = targets.get(point.target or "")
        if target is None:
            out.append(point)
            continue
        found = price_performance(point, target)
        out.append(point.model_copy(update={"tpm": found.tpm, "cost": found.cost}))
    return out


def _prices(raw: Any) -> Prices | None:
    if not isinstance(raw, Mapping):
        return None
    try:
        return Prices.model_validate(raw)
    except ValidationError:
        return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _bounds(low: float | None, high: float | None) -> Bounds | None:
    if low is None or high is None:
        return None
    return Bounds(low=_sig(low), high=_sig(high))


def _sig_bounds(bounds: Bounds | None) -> Bounds | None:
    return Bounds(low=_sig(bounds.low), high=_sig(bounds.high)) if bounds is not None else None


def _money(value: float | None) -> float | None:
    return _round(value, 4)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _sig(value: float | None, digits: int = 6) -> float | None:
    """`value` to `digits` significant digits ($/TPM is often 0.0000x)."""
    if value is None or value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))
