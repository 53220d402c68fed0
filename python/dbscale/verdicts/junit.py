"""JUnit XML, the test view every CI reads: one testsuite per command, one testcase per thing
judged (a threshold at a point, a metric at a compared point, a capacity objective, a history
series), a failure carrying the value, its interval and the limit. Inconclusive cases are
skipped cases, so the CI shows them without failing (unless strict made them failures)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dbscale.errors import ResultsError
from dbscale.files import write_atomic
from dbscale.history.detect import SeriesChanges
from dbscale.history.output import marker
from dbscale.results.capacity_file import CapacityFile, CapacityStudy, ObjectiveResult
from dbscale.results.compare import METRICS as COMPARED
from dbscale.results.compare import Comparison
from dbscale.stats.comparison import BETTER, SAME, WORSE
from dbscale.verdicts.thresholds_file import INCONCLUSIVE, ThresholdsFile

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass(frozen=True)
class Case:
    name: str
    classname: str
    outcome: str  # passed | failed | skipped
    message: str = ""
    seconds: float = 0.0


def junit_xml(suite: str, cases: Sequence[Case]) -> str:
    failures = sum(c.outcome == FAILED for c in cases)
    skipped = sum(c.outcome == SKIPPED for c in cases)
    seconds = sum(c.seconds for c in cases)
    root = ET.Element("testsuites", name="dbscale", tests=str(len(cases)),
                      failures=str(failures), errors="0", time=f"{seconds:.3f}")  # fmt: skip
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)),
                         failures=str(failures), errors="0", skipped=str(skipped),
                         time=f"{seconds:.3f}")  # fmt: skip
    for case in cases:
        element = ET.SubElement(node, "testcase", name=case.name, classname=case.classname,
                                time=f"{case.seconds:.3f}")  # fmt: skip
        if case.outcome == FAILED:
            failure = ET.SubElement(element, "failure", message=case.message, type="failure")
            failure.text = case.message
        elif case.outcome == SKIPPED:
            ET.SubElement(element, "skipped", message=case.message)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def write_junit(path: Path, suite: str, cases: Sequence[Case]) -> None:
    try:
        write_atomic(path, junit_xml(suite, cases))
    except OSError as exc:
        raise ResultsError(f"cannot write the JUnit file {path}: {exc.strerror or exc}",
                           "give --junit a path in a writable directory") from None  # fmt: skip


def threshold_cases(found: ThresholdsFile, study: str) -> list[Case]:
    cases = []
    for v in found.verdicts:
        outcome = (FAILED if found.counts_as_failed(v) else
                   SKIPPED if v.verdict == INCONCLUSIVE else PASSED)  # fmt: skip
        cases.append(Case(f"{v.threshold} @ {v.point}", f"dbscale.thresholds.{study}", outcome,
                          f"{v.verdict}: {v.metric} {v.why}"))  # fmt: skip
    if found.aborted:
        cases.append(Case("study ran to its end", f"dbscale.thresholds.{study}", FAILED,
                          found.aborted))  # fmt: skip
    return cases


def _unanswered(search: CapacityFile, objective: ObjectiveResult) -> str:
    """Why a search stands by no answer for an objective."""
    if objective.host_limited:
        return "the failing level ran while the host was busy: the host may have been the limit"
    if objective.short_level is not None:
        return "undecided: a level was too short"
    if objective.drift_high is not None:
        return "no answer: the target got slower during the search"
    if objective.exhausted:
        return "undecided: no confirmed level within the search's most levels"
    if search.finished:
        return "no level met the objective"
    return "the search did not finish"


def capacity_cases(found: CapacityStudy, study: str) -> list[Case]:
    """A case per search and objective: passed with an answer the search stands by."""
    cases = []
    for search in found.searches:
        where = search.point or search.workload
        for objective in search.objectives:
            name = f"capacity {objective.objective} @ {where}"
            if objective.capacity is not None and not objective.host_limited:
                words = f"capacity {objective.capacity:g} {search.unit}"
                if objective.lowest_fail is not None:
                    words += f" (first failing level {objective.lowest_fail:g})"
                cases.append(Case(name, f"dbscale.capacity.{study}", PASSED, words))
                continue
            cases.append(Case(name, f"dbscale.capacity.{study}", FAILED,
                              _unanswered(search, objective)))  # fmt: skip
    return cases


def comparison_cases(comparison: Comparison) -> list[Case]:
    """A case per compared point and metric: failed when B is worse, skipped when the runs
    cannot tell."""
    cases = []
    for point in comparison.points:
        for name, _higher in COMPARED:
            change = point.metric(name)
            words = (f"{change.verdict}: {change.change_pct:+.1f}% "
                     f"[{change.ci_low_pct:+.1f}%, {change.ci_high_pct:+.1f}%]"
                     if change.change_pct is not None and change.ci_low_pct is not None
                     and change.ci_high_pct is not None else change.verdict)  # fmt: skip
            outcome = (FAILED if change.verdict == WORSE else
                       PASSED if change.verdict in (BETTER, SAME) else SKIPPED)  # fmt: skip
            cases.append(Case(f"{name} @ {point.point}", "dbscale.compare", outcome, words))
    return cases


def history_cases(results: Sequence[SeriesChanges]) -> list[Case]:
    """A case per series and metric: failed on a regression in the newest ingest."""
    cases = []
    for result in results:
        s = result.series
        name = f"{s.metric} of {s.series} @ {s.target}"
        regressions = result.regressions_in_newest
        if regressions:
            cases.append(Case(name, "dbscale.history", FAILED, marker(regressions[0])))
        elif len(s.points) < 2:
            cases.append(Case(name, "dbscale.history", SKIPPED, result.note or "one point"))
        else:
            cases.append(Case(name, "dbscale.history", PASSED, result.note))
    return cases
