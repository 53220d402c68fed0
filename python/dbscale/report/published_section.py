"""The published findings of the study a recipe reproduces, each beside what this study measured
(issue 42): a ratio between two configurations with its 95% interval against the published range,
or where a sweep peaked against where the publication saw it; "agrees" when they overlap,
"differs" when not, "undecided" when the interval holds both the published difference and none,
"not measured here" when the study ran nothing to set against it (or the
finding states no shape). Absolute numbers differ by machine, so only shapes are compared."""

from __future__ import annotations

from dataclasses import dataclass

from dbscale.plan.published import Published, PublishedFinding, PublishedPeak, PublishedRatio
from dbscale.report.headline import axis_named, pair_changes
from dbscale.report.markup import Markup, element
from dbscale.report.tables import Cell, table_section
from dbscale.report.view import PointView, ResultsView

AGREES, DIFFERS, UNMEASURED = "agrees", "differs", "not measured here"
UNDECIDED = "undecided: the interval also holds no difference"


@dataclass(frozen=True)
class Comparison:
    finding: PublishedFinding
    published: str
    measured: str
    verdict: str


def compare_findings(study: ResultsView, published: Published) -> list[Comparison]:
    out = []
    for finding in published.findings:
        if finding.ratio is not None:
            out.append(_ratio(study, finding, finding.ratio))
        elif finding.peak is not None:
            out.append(_peak(study, finding, finding.peak))
        else:
            out.append(Comparison(finding, "as stated", "-", UNMEASURED))
    return out


def _ratio(study: ResultsView, finding: PublishedFinding, ratio: PublishedRatio) -> Comparison:
    low = ratio.low or 0.0
    shown = (f"{ratio.value} / {ratio.over}: " + (f"{low:.2f}x to {ratio.high:.2f}x"
             if ratio.low is not None else f"up to {ratio.high:.2f}x"))  # fmt: skip
    axis = axis_named(study, ratio.axis)
    changes = pair_changes(study, axis, ratio.value, ratio.over) if axis is not None else []
    measured = [(where, c) for where, c in changes if c.change_pct is not None]
    if not measured:
        return Comparison(finding, shown, "-", UNMEASURED)
    words, verdicts = [], []
    published_differs = not low <= 1.0 <= ratio.high  # the publication saw a difference
    for where, c in measured:
        mid = 1 + (c.change_pct or 0.0) / 100
        lo = 1 + c.ci_low_pct / 100 if c.ci_low_pct is not None else mid
        hi = 1 + c.ci_high_pct / 100 if c.ci_high_pct is not None else mid
        if not (lo <= ratio.high and hi >= low):
            verdicts.append(DIFFERS)
        elif published_differs and lo <= 1.0 <= hi:
            verdicts.append(UNDECIDED)  # overlaps, but "no difference" is as likely here
        else:
            verdicts.append(AGREES)
        at = f" at {where}" if where else ""
        words.append(f"{mid:.2f}x [{lo:.2f}, {hi:.2f}]{at}")
    return Comparison(finding, shown, "; ".join(words), _overall(verdicts))


def _overall(verdicts: list[str]) -> str:
    """One verdict over the places measured: the same everywhere, else counted."""
    if len(set(verdicts)) == 1:
        return verdicts[0]
    counts = ", ".join(f"{v.split(':')[0]} at {verdicts.count(v)}"
                       for v in (AGREES, DIFFERS, UNDECIDED) if v in verdicts)  # fmt: skip
    return f"{counts} of {len(verdicts)}"


def _peak(study: ResultsView, finding: PublishedFinding, peak: PublishedPeak) -> Comparison:
    shown = f"{peak.axis} = {' or '.join(peak.values)}" + (f" (per {peak.per})" if peak.per else "")
    axis = axis_named(study, peak.axis)
    if axis is None:
        return Comparison(finding, shown, "-", UNMEASURED)
    per = axis_named(study, peak.per) if peak.per else None
    groups: dict[str, list[PointView]] = {}
    for point in study.points:
        key = per.format(point.coords.get(per.key)) if per is not None else ""
        groups.setdefault(key, []).append(point)
    words, verdicts = [], []
    for key, points in groups.items():
        best = max(points, key=lambda p: p.summary.throughput.median or 0.0)
        value = axis.format(best.coords.get(axis.key))
        verdicts.append(value in peak.values)
        words.append(f"{peak.axis} = {value}" + (f" on {key}" if key else ""))
    return Comparison(finding, shown, "; ".join(words),
                      _overall([AGREES if v else DIFFERS for v in verdicts]))  # fmt: skip


def published_section(study: ResultsView) -> Markup:
    """The section, or nothing when the plan carries no published findings."""
    published = study.published
    if published is None or study.capacity is not None:
        return Markup()
    rows: list[list[Cell]] = [
        [c.finding.says, c.published, c.measured, c.verdict]
        for c in compare_findings(study, published)
    ]
    intro = (f"What {published.source} published, beside this study's measurement of the same "
             "shape: ratios between configurations (median of the runs, 95% interval) and where "
             "sweeps peaked. Absolute numbers differ by machine and are not compared.")  # fmt: skip
    headers = ["published finding", "its shape", "measured here", "verdict"]
    return table_section("published", "Published findings beside these", intro, headers, rows)


def published_link(study: ResultsView) -> Markup | None:
    shown = study.published is not None and study.capacity is None
    return element("a", "Published", href="#published") if shown else None
