"""`dbscale rank`: configurations of one or more studies ranked by one metric, as the Cloud
Report ranks instance types. A configuration is the runs sharing the `--by` facts (any fact of
where a run ran, or of what it ran). For each: n, the median with its 95% order-statistic
interval (n >= 6; the range below that), mean, CV, min and max, the price per unit where the
target's prices are known, and its rank with a 95% bootstrap rank interval and tie group
(stats/ranking.py).

Only like things are ranked: every fact of what was run (workload, parameters, clients, rate,
point axes, objectives) must be the same over all runs, unless it is one of the `--by` facts or
is allowed to differ (`--allow`, e.g. TPC-C warehouses scaled with the machine). Runs that do not
count are left out and listed with the reason.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dbscale.errors import ConfigError
from dbscale.results.measurements import (
    COUNTED_ONCE,
    Measurement,
    Measurements,
    collect_measurements,
)
from dbscale.results.metrics import ALL_STATEMENTS, METRICS, known_metric
from dbscale.stats.confidence import median_order_statistic_ci, spread
from dbscale.stats.ranking import RANK_RESAMPLES, rank_configurations

# The price per unit shown beside a metric that is not itself a price.
PRICE_OF = {"capacity": "cost_per_capacity", "capacity_per_vcpu": "cost_per_capacity"}
DEFAULT_PRICE = "cost_per_tpm"
MAX_VALUES_LISTED = 3
MAX_FACTS_LISTED = 3  # an unlike-runs error names this many differing facts, then counts
# Facts whose values measure different things: no ranking puts them side by side.
NEVER_ALLOWED = frozenset({"workload"})


class UnlikeRunsError(ConfigError):
    default_hint = (
        "rank like runs only (--where FACT=VALUE), or --allow FACT when it differs by design"
    )


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class RankedConfiguration(_Model):
    configuration: str
    facts: dict[str, str]
    n: int
    median: float
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str = ""  # "order-statistic", or "range" with fewer than 6 runs
    mean: float
    cv_pct: float | None = None
    min: float
    max: float
    price_per_unit: float | None = None  # median over runs of the monthly cost per unit
    rank: int | None = None  # None: too few runs to rank
    rank_low: int | None = None
    rank_high: int | None = None
    tie_group: int | None = None
    dead_heat: bool = False
    studies: list[str] = Field(default_factory=list)
    values: list[float] = Field(default_factory=list)  # per run, in the order recorded


class LeftOutRun(_Model):
    study: str
    run_id: str
    point: str
    reason: str


class RankTable(_Model):
    metric: str
    title: str
    unit: str
    higher_is_better: bool
    by: list[str]
    allowed: list[str] = Field(default_factory=list)
    where: dict[str, str] = Field(default_factory=dict)
    require_pass: bool = False
    price_metric: str | None = None
    confidence: float = 0.95
    resamples: int = RANK_RESAMPLES
    common: dict[str, str] = Field(default_factory=dict)  # what every ranked run shares
    studies: list[str] = Field(default_factory=list)
    configurations: list[RankedConfiguration] = Field(default_factory=list)
    left_out: list[LeftOutRun] = Field(default_factory=list)

    @property
    def dead_heats(self) -> list[list[str]]:
        groups: dict[int, list[str]] = defaultdict(list)
        for c in self.configurations:
            if c.dead_heat and c.tie_group is not None:
                groups[c.tie_group].append(c.configuration)
        return list(groups.values())


@dataclass(frozen=True)
class RankRequest:
    directories: Sequence[Path]
    metric: str
    by: Sequence[str]
    allow: Sequence[str] = ()
    where: Mapping[str, str] = field(default_factory=dict)
    require_pass: bool = False


def _check_request(request: RankRequest) -> None:
    if not known_metric(request.metric) or request.metric == ALL_STATEMENTS:
        raise ConfigError(
            f"unknown metric {request.metric!r}",
            f"metrics: {', '.join(METRICS)}, micro.<figure>, or stmt:<fingerprint>.<figure> "
            "(e.g. stmt:490b4ece0513.mean_ms)",
        )
    if not request.by:
        raise ConfigError(
            "rank needs --by: the facts that make a configuration",
            "e.g. --by instance_type, --by target, --by vcpus,storage_type",
        )


def _selected(found: Measurements, request: RankRequest) -> list[Measurement]:
    kept = [m for m in found.items if m.metric == request.metric]
    for name, value in request.where.items():
        kept = [m for m in kept if m.fact(name) == value]
    return kept


def _unlike_facts(items: Sequence[Measurement], exempt: set[str]) -> dict[str, str]:
    """Each fact of what was run with more than one value, described with where each is."""
    names = sorted({name for m in items for name in m.what} - exempt)
    problems = {}
    for name in names:
        seen: Counter[tuple[str, str]] = Counter((m.what.get(name, "none"), m.study) for m in items)
        values = sorted({value for value, _ in seen})
        if len(values) < 2:
            continue
        shown = [f"{v} in {_few(sorted({s for (x, s) in seen if x == v}), 'studies')}"
                 for v in values[:MAX_VALUES_LISTED]]  # fmt: skip
        more = (
            f" and {len(values) - MAX_VALUES_LISTED} more"
            if len(values) > MAX_VALUES_LISTED
            else ""
        )
        problems[name] = f"{name} differs ({'; '.join(shown)}{more})"
    return problems


def _few(names: Sequence[str], what: str) -> str:
    """`a, b and 3 more studies`: a list kept to a line's worth."""
    if len(names) <= MAX_VALUES_LISTED:
        return ", ".join(names)
    return f"{', '.join(names[:2])} and {len(names) - 2} more {what}"


def _configuration_name(facts: Mapping[str, str]) -> str:
    return " / ".join(facts.values()) if len(facts) > 1 else next(iter(facts.values()))


def _summarise(
    name: str, facts: dict[str, str], items: Sequence[Measurement], prices: Mapping[str, float]
) -> RankedConfiguration:
    values = [m.value for m in items]
    described = spread(values)
    assert described is not None
    ci = median_order_statistic_ci(values)
    run_prices = [prices[m.run_id] for m in items if m.run_id in prices]
    return RankedConfiguration(
        configuration=name, facts=facts, n=len(values), median=described.median,
        ci_low=ci.low if ci else described.min, ci_high=ci.high if ci else described.max,
        ci_method=ci.method if ci else "range", mean=described.mean, cv_pct=described.cv_pct,
        min=described.min, max=described.max,
        price_per_unit=statistics.median(run_prices) if run_prices else None,
        studies=sorted({m.study for m in items}), values=values,
    )  # fmt: skip


def rank(request: RankRequest) -> RankTable:
    """The rank table of `request`; `UnlikeRunsError` when the runs are not alike."""
    _check_request(request)
    metric_name = request.metric
    price_metric = PRICE_OF.get(metric_name, DEFAULT_PRICE) if metric_name in METRICS else None
    if price_metric == metric_name or metric_name.startswith("cost_"):
        price_metric = None
    wanted = [metric_name] + ([price_metric] if price_metric else [])
    found = Measurements()
    for directory in request.directories:
        found.extend(collect_measurements(directory, wanted, require_pass=request.require_pass))
    metric = found.metrics.get(metric_name)
    items = _selected(found, request)
    if metric is None or not items:
        raise ConfigError(
            f"no run of these studies has a value for {metric_name}",
            "check --metric and --where; `dbscale rank -h` lists the metrics",
        )
    exempt = set(request.by) | set(request.allow)
    problems = _unlike_facts(items, exempt)
    if problems:
        listed = list(problems.values())[:MAX_FACTS_LISTED]
        more = len(problems) - len(listed)
        allowable = [name for name in problems if name not in NEVER_ALLOWED]
        never = [name for name in problems if name in NEVER_ALLOWED]
        hint = "rank like runs only (--where FACT=VALUE)"
        if never:
            hint = (f"rank one {never[0]} at a time (--where {never[0]}=VALUE): runs of different "
                    f"{never[0]}s are never ranked together")  # fmt: skip
        if allowable:
            hint += (f", or --allow {','.join(allowable)} when that differs by design (e.g. "
                     "warehouses scaled with the machine)")  # fmt: skip
        raise UnlikeRunsError(
            "these runs are unlike things: "
            + "; ".join(listed)
            + (f"; and {more} more fact{'s' if more > 1 else ''}" if more > 0 else ""),
            hint,
        )
    missing = [name for name in request.by if all(m.fact(name) is None for m in items)]
    if missing:
        raise ConfigError(
            f"no run has the fact {missing[0]!r} to rank by",
            "facts: target, instance_type, vcpus, nodes, storage_type, engine_version, "
            "server_version, any point axis or parameter",
        )
    groups: dict[str, list[Measurement]] = defaultdict(list)
    facts_of: dict[str, dict[str, str]] = {}
    for m in items:
        facts = {name: m.fact(name) or "none" for name in request.by}
        key = _configuration_name(facts)
        groups[key].append(m)
        facts_of[key] = facts
    prices = {m.run_id: m.value for m in found.items if m.metric == price_metric}
    summaries = {k: _summarise(k, facts_of[k], v, prices) for k, v in groups.items()}
    ranked = rank_configurations(
        {k: s.values for k, s in summaries.items()}, higher_is_better=metric.higher_is_better
    )
    configurations = [
        summaries[r.key].model_copy(update={
            "rank": r.rank, "rank_low": r.rank_low, "rank_high": r.rank_high,
            "tie_group": r.group, "dead_heat": r.dead_heat})
        for r in ranked
    ]  # fmt: skip
    kept_runs = {m.run_id for m in items}
    left = [LeftOutRun(study=x.study, run_id=x.run_id, point=x.point_key, reason=x.reason)
            for x in found.left_out
            if (x.run_id not in kept_runs or x.reason.startswith(COUNTED_ONCE))
            and x.reason != f"no {price_metric}"
            and all(x.facts.get(k, v) == v for k, v in request.where.items())]  # fmt: skip
    common = {k: v for k, v in items[0].what.items()
              if all(m.what.get(k) == v for m in items)}  # fmt: skip
    return RankTable(
        metric=metric_name, title=metric.title, unit=metric.unit,
        higher_is_better=metric.higher_is_better, by=list(request.by),
        allowed=list(request.allow), where=dict(request.where),
        require_pass=request.require_pass,
        price_metric=price_metric if prices else None, common=common,
        studies=[d.name for d in request.directories], configurations=configurations,
        left_out=_unique(left),
    )  # fmt: skip


def _unique(rows: Sequence[LeftOutRun]) -> list[LeftOutRun]:
    seen: dict[tuple[str, str], LeftOutRun] = {}
    for row in rows:
        seen.setdefault((row.study, row.run_id), row)
    return list(seen.values())
