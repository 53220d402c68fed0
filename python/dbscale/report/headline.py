"""The few sentences a report opens with, computed from the numbers, that answer a study's
question: where throughput peaks (with its interval), and what each setting with a known cost
costs (TLS, a connection per transaction as in seed 000's "no pooling", TCP instead of a Unix
socket), as a percentage of throughput with its interval and the Mann-Whitney p, or that no
significant difference showed and how many more runs per side would detect one. The same
comparisons give the penalty charts (seed 000's Fig. 5 and 6 as percentages).
"""

from __future__ import annotations

from dataclasses import dataclass

from dbscale.report import specs
from dbscale.report.axes import Axis
from dbscale.report.chart import Chart
from dbscale.report.facts import PLAN_PREFIX
from dbscale.report.view import PointView, ResultsView
from dbscale.results.capacity_file import answer_lines
from dbscale.results.expectations import EXPECTED
from dbscale.results.failover_cost import failover_sentences
from dbscale.stats.comparison import (
    BETTER,
    DEFAULT_NOISE_PCT,
    INCONCLUSIVE,
    WORSE,
    Change,
    adjust_and_decide,
    compare_samples,
    log_spread,
    min_runs_per_side,
    runs_per_side,
    verdict_words,
)
from dbscale.verdicts.thresholds_file import PASS

NAMES = {"tls": "TLS", "connect": "a connection per transaction", "transport": "TCP"}
CHEAP_NAMES = {"tls": "no TLS", "connect": "persistent connections", "transport": "the Unix socket"}


@dataclass(frozen=True)
class Penalty:
    """One costly point against its cheap sibling: `change` is B/A - 1 in % (negative: a cost)."""

    axis: str  # the bare axis name (tls, connect, transport)
    costly: str
    where: str  # the other swept settings, "" when there are none
    change: Change
    spread: float | None
    comparisons: int  # of this setting, Holm-corrected together


def _bare(axis: Axis) -> str:
    return axis.key.removeprefix(PLAN_PREFIX)


def _where(point: PointView, axes: list[Axis], skip: str) -> str:
    return ", ".join(
        f"{a.title}={a.format(point.coords.get(a.key))}" for a in axes if a.swept and a.key != skip
    )


def _sibling(study: ResultsView, axis: Axis, value: str, where: str) -> PointView | None:
    """The point with `value` on `axis` and the other swept settings `where`, if it ran."""
    return next(
        (p for p in study.points if axis.format(p.coords.get(axis.key)) == value
         and _where(p, study.axes, axis.key) == where),
        None,
    )  # fmt: skip


def _values(point: PointView, per_vcpu: bool = False) -> list[float]:
    """The point's runs' throughput, per vCPU of its target when asked (and known)."""
    vcpus = _vcpus(point) if per_vcpu else None
    return [run.throughput / vcpus if vcpus else run.throughput for run in point.runs]


def _vcpus(point: PointView) -> float | None:
    tpm = point.summary.tpm
    return float(tpm.vcpus) if tpm is not None and tpm.vcpus else None


def per_vcpu_study(study: ResultsView) -> bool:
    """A study of tpmC on targets of known sizes: compared per vCPU, the Cloud Report's metric
    (raw tpmC of machines of different sizes at their own loads compares the sizes)."""
    return (
        study.unit == "tpmC"
        and bool(study.points)
        and all(_vcpus(p) is not None for p in study.points)
    )


def axis_named(study: ResultsView, name: str) -> Axis | None:
    """The study's swept axis of that name (a plan's matrix key or a run fact), if any."""
    return next((a for a in study.swept if _bare(a) == name), None)


def pair_changes(study: ResultsView, axis: Axis, value: str, over: str) -> list[tuple[str, Change]]:
    """Each point with `value` on `axis` against its sibling with `over` (the other swept
    settings alike): where, and the change (Holm-corrected over them)."""
    found: list[tuple[str, Change]] = []
    for point in study.points:
        if axis.format(point.coords.get(axis.key)) != value:
            continue
        where = _where(point, study.axes, axis.key)
        sibling = _sibling(study, axis, over, where)
        if sibling is not None:
            found.append((where, compare_samples(study.unit, _values(sibling), _values(point),
                                                 higher_is_better=True)))  # fmt: skip
    decided = adjust_and_decide([c for _, c in found], DEFAULT_NOISE_PCT)
    return [(w, c) for (w, _), c in zip(found, decided, strict=True)]


def penalties(study: ResultsView) -> dict[str, list[Penalty]]:
    """Per costly axis of the study, each costly point against its sibling, Holm across them."""
    found: dict[str, list[Penalty]] = {}
    for axis in study.swept:
        bare = _bare(axis)
        if bare not in EXPECTED:
            continue
        cheap, costly = EXPECTED[bare]
        pairs = []
        for point in study.points:
            value = axis.format(point.coords.get(axis.key))
            if value not in costly:
                continue
            where = _where(point, study.axes, axis.key)
            sibling = _sibling(study, axis, cheap, where)
            if sibling is not None:
                a, b = _values(sibling), _values(point)
                change = compare_samples(study.unit, a, b, higher_is_better=True)
                pairs.append((value, where, change, log_spread(a, b)))
        decided = adjust_and_decide([c for _, _, c, _ in pairs], DEFAULT_NOISE_PCT)
        found[bare] = [
            Penalty(bare, value, where, change, spread, len(pairs))
            for (value, where, _, spread), change in zip(pairs, decided, strict=True)
        ]
    return {k: v for k, v in found.items() if v}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0f}"


def _interval(change: Change) -> str:
    return f"[{_pct(change.ci_low_pct)}, {_pct(change.ci_high_pct)}]"


def _penalty_sentence(p: Penalty, unit: str) -> str:
    c = p.change
    at = f" at {p.where}" if p.where else ""
    what = f"{NAMES[p.axis]} ({p.axis}={p.costly})" if p.axis == "tls" else NAMES[p.axis]
    if c.change_pct is None:
        return f"{what}{at}: too few runs to compare"
    p_text = f"p={c.p_adjusted:.3f}" if c.p_adjusted is not None else "p -"
    least = min_runs_per_side(p.comparisons)
    if min(c.n_a, c.n_b) < least:
        across = f" for {p.comparisons} comparisons" if p.comparisons > 1 else ""
        few = f"too few for a test (at least {least} a side{across})"
        return (f"{what}{at}: {_pct(c.change_pct)}% {_interval(c)} of {unit} from {c.n_a} and "
                f"{c.n_b} runs, {few}")  # fmt: skip
    if c.verdict in (WORSE, BETTER) and c.ci_low_pct is not None and c.ci_high_pct is not None:
        cost = c.change_pct < 0
        low, high = (-c.ci_high_pct, -c.ci_low_pct) if cost else (c.ci_low_pct, c.ci_high_pct)
        verb = "costs" if cost else "adds"
        return (f"{what} {verb} {abs(c.change_pct):.0f}% [{low:.0f}, {high:.0f}] of {unit}{at} "
                f"({p_text})")  # fmt: skip
    if c.verdict == INCONCLUSIVE:  # the words of the chart's label and of `compare`
        return (f"{what}{at}: {_pct(c.change_pct)}% {_interval(c)} of {unit} ({p_text}), "
                f"{verdict_words(c)}")  # fmt: skip
    text = (f"no significant difference between {CHEAP_NAMES[p.axis]} and {what}{at} "
            f"({_pct(c.change_pct)}% {_interval(c)}, {p_text})")  # fmt: skip
    if p.spread is not None and p.spread > 0:
        target = max(abs(c.change_pct), DEFAULT_NOISE_PCT)
        more = runs_per_side(p.spread, target, comparisons=p.comparisons) - min(c.n_a, c.n_b)
        if more > 0:
            text += f"; {more} more runs per side would detect a {target:.0f}% difference"
    return text


def _ratio_sentence(name: str, base: str, where: str, c: Change, comparisons: int) -> str:
    """`B is 1.83x A [1.71x, 1.95x] at clients=128 (p=0.008)`, or why it cannot be said."""
    at = f" at {where}" if where else ""
    if c.change_pct is None:
        return f"{name} against {base}{at}: too few runs to compare"
    ratio = 1 + c.change_pct / 100
    interval = ""
    if c.ci_low_pct is not None and c.ci_high_pct is not None:
        interval = f" [{1 + c.ci_low_pct / 100:.2f}x, {1 + c.ci_high_pct / 100:.2f}x]"
    least = min_runs_per_side(comparisons)
    if min(c.n_a, c.n_b) < least:
        return (f"{name} is {ratio:.2f}x {base}{interval}{at}, from {c.n_a} and {c.n_b} runs: "
                f"too few for a test (at least {least} a side)")  # fmt: skip
    p_text = f"p={c.p_adjusted:.3f}" if c.p_adjusted is not None else "p -"
    if c.verdict in (WORSE, BETTER):
        return f"{name} is {ratio:.2f}x {base}{interval}{at} ({p_text})"
    return (f"no significant difference between {name} and {base}{at} "
            f"({ratio:.2f}x{interval}, {p_text})")  # fmt: skip


def target_sentences(study: ResultsView) -> list[str]:
    """A study of several targets (seed 001's editions, the Cloud Report's machines): each
    target's throughput as a multiple of the first's at each shared setting, with its interval;
    Holm-corrected over all of them, at most 3 settings per target."""
    axis = next((a for a in study.swept if _bare(a) == "target"), None)
    if axis is None or len(axis.values) < 2:
        return []
    names = [axis.format(v) for v in axis.values]
    base = names[0]
    per_vcpu = per_vcpu_study(study)
    found: list[tuple[str, str, Change]] = []
    for point in study.points:
        name = axis.format(point.coords.get(axis.key))
        if name == base:
            continue
        where = _where(point, study.axes, axis.key)
        sibling = _sibling(study, axis, base, where)
        if sibling is not None:
            change = compare_samples(study.unit, _values(sibling, per_vcpu),
                                     _values(point, per_vcpu), higher_is_better=True)  # fmt: skip
            found.append((f"{name} per vCPU" if per_vcpu else name, where, change))
    decided = adjust_and_decide([c for _, _, c in found], DEFAULT_NOISE_PCT)
    out = []
    for name in names[1:]:
        name = f"{name} per vCPU" if per_vcpu else name
        mine = [(w, c) for (n, w, _), c in zip(found, decided, strict=True) if n == name]
        shown = mine if len(mine) <= 3 else [*mine[:1], *mine[-2:]]
        out += [_ratio_sentence(name, base, w, c, len(found)) for w, c in shown]
    return out


def threshold_sentences(study: ResultsView) -> list[str]:
    """First of all, when the study had objectives: which passed, and each one that did not."""
    found = study.thresholds
    if found is None or not found.verdicts:
        return []
    failed = found.failures()
    passed = sum(v.verdict == PASS for v in found.verdicts)
    total = len(found.verdicts)
    head = (f"Thresholds: all {total} passed" if found.passed else
            f"Thresholds: {passed} of {total} passed, {len(failed)} failed")  # fmt: skip
    others = total - passed - len(failed)
    if others:
        head += f", {others} inconclusive"
    lines = [head + (f"; {found.aborted}" if found.aborted else "")]
    lines += [f"{v.threshold} at {v.point}: {v.verdict}: {v.why}" for v in failed[:5]]
    return lines


def sentences(study: ResultsView) -> list[str]:
    """The headline: the thresholds' verdicts when the study had any, then its question's
    answer."""
    return threshold_sentences(study) + question_sentences(study)


def question_sentences(study: ResultsView) -> list[str]:
    """The peak, each target against the first, then each costly setting's cost (at most 3 per
    setting)."""
    if study.capacity is not None:  # capacity searches answer their own question
        return [line for found in study.capacity.searches for line in answer_lines(found)]
    if not study.points:
        return []
    # An availability study's question first: what each fault step cost.
    several = len(study.points) > 1
    faults = failover_sentences(
        [(p.label if several else "", [run.record for run in p.runs]) for p in study.points]
    )
    unit = study.unit
    best = max(study.points, key=lambda p: p.summary.throughput.median or 0.0)
    tput = best.summary.throughput
    ci = tput.ci
    interval = f" [{ci.low:,.0f}, {ci.high:,.0f}]" if ci else ""
    if per_vcpu_study(study):  # the Cloud Report's metric first, the raw figure beside it
        top = max(study.points, key=lambda p: (p.summary.throughput.median or 0.0) /
                  (_vcpus(p) or 1.0))  # fmt: skip
        vcpus = _vcpus(top) or 1.0
        figures = top.summary.throughput
        bounds = (f" [{figures.ci.low / vcpus:,.0f}, {figures.ci.high / vcpus:,.0f}]"
                  if figures.ci else "")  # fmt: skip
        out = [f"{unit} per vCPU peaks at {top.label} ({vcpus:g} vCPUs): "
               f"{(figures.median or 0) / vcpus:,.0f}{bounds} ({figures.median or 0:,.0f} "
               f"{unit} in all)"]  # fmt: skip
    elif len(study.points) > 1:
        size = best.coords.get("vcpus")  # a size sweep names its targets; say their size
        where = best.label + (f" ({size} vCPUs)" if size and "vCPUs=" not in best.label else "")
        out = [f"{unit} peaks at {where}: {tput.median or 0:,.0f}{interval}"]
    else:
        out = [f"{unit}: {tput.median or 0:,.0f}{interval} over {best.summary.runs} run(s)"]
    out = [*faults, *out, *target_sentences(study)]
    for found in penalties(study).values():
        shown = found if len(found) <= 3 else [*found[:1], *found[-2:]]
        out += [_penalty_sentence(p, unit) for p in shown]
        if len(found) > 3:
            out.append(f"(and {len(found) - 3} more comparisons in the penalty chart)")
    return out


def penalty_charts(study: ResultsView) -> list[Chart]:
    """Per costly setting, its cost at each point as a bar with the change's 95% interval."""
    charts = []
    for axis, found in penalties(study).items():
        rows = [
            {
                "config": f"{p.axis}={p.costly}" + (f", {p.where}" if p.where else ""),
                "at": p.change.verdict,
                "n": f"{p.change.n_a}/{p.change.n_b}",
                "cost": None if p.change.change_pct is None else -p.change.change_pct,
                "cost_lo": None if p.change.ci_high_pct is None else -p.change.ci_high_pct,
                "cost_hi": None if p.change.ci_low_pct is None else -p.change.ci_low_pct,
            }
            for p in found
        ]
        title = f"Cost of {NAMES[axis]}"
        charts.append(
            Chart(
                f"cost-of-{axis}", "penalty", title,
                f"The {study.unit} lost to {NAMES[axis]} against {CHEAP_NAMES[axis]} at each "
                "point, in % (ratio of the medians, whiskers: its 95% bootstrap interval; the "
                "label says the verdict, Mann-Whitney Holm-corrected). Negative: a gain.",
                specs.bars_per_configuration(rows, title=title, value="cost", low="cost_lo",
                                             high="cost_hi", x_title=f"% of {study.unit} lost"),
            )
        )  # fmt: skip
    return charts
