"""A study's thresholds at its end and, with `abort_on_fail`, after each run: judged from the
results directory (verdicts/judge.py), written to thresholds.json, printed, and the exit code."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from dbscale.errors import ConfigError, ThresholdFailedError
from dbscale.plan.study import Study
from dbscale.results.capacity_file import read_capacity
from dbscale.verdicts.baseline import check_baseline
from dbscale.verdicts.judge import ThresholdSet, judge
from dbscale.verdicts.junit import capacity_cases, threshold_cases, write_junit
from dbscale.verdicts.thresholds_file import FAIL, ThresholdsFile, write_thresholds

CAPACITY_HINT = ("a capacity search's thresholds are on its answer (capacity, capacity_per_vcpu, "
                 "cost_per_capacity); its latency objectives are --slo")  # fmt: skip


def study_thresholds(study: Study) -> ThresholdSet | None:
    """The study's thresholds, checked against what the study is (before anything runs)."""
    settings = study.plan.thresholds
    if settings is None:
        return None
    wanted = settings.resolved()
    searching = study.plan.capacity is not None
    for threshold in wanted.thresholds:
        if threshold.of_capacity != searching:
            raise ConfigError(
                f"threshold {threshold.text!r} is on "
                f"{'a capacity search' if threshold.of_capacity else 'runs'}, but this study "
                f"{'searches capacity' if searching else 'has no capacity search'}",
                CAPACITY_HINT if searching else "use run metrics (tps, p99_ms, errors_pct, ...)",
            )
    if wanted.baseline is not None:
        check_baseline(wanted.baseline)
    return wanted


class AbortWatch:
    """`abort_on_fail`: after each run, a threshold clearly broken (the whole interval, or the
    one run, beyond its limit) past the grace period stops the study."""

    def __init__(self, wanted: ThresholdSet, grace_s: float, directory: Path) -> None:
        self.wanted, self.grace_s, self.directory = wanted, grace_s, directory
        self.started = time.monotonic()

    def reason(self) -> str | None:
        elapsed = time.monotonic() - self.started
        if elapsed < self.grace_s:
            return None
        broken = [v for v in judge(self.directory, self.wanted).verdicts if v.verdict == FAIL]
        if not broken:
            return None
        first = broken[0]
        return (f"stopped after {elapsed:.0f} s by --abort-on-fail: {first.threshold} broken at "
                f"{first.point}: {first.why}")  # fmt: skip


def print_verdicts(found: ThresholdsFile, out: Console) -> None:
    for v in found.verdicts:
        out.print(f"threshold {v.threshold} @ {v.point}: {v.verdict}: {v.why}", highlight=False,
                  soft_wrap=True)  # fmt: skip
    if found.aborted:
        out.print(found.aborted, highlight=False, soft_wrap=True)
    failed = found.failures()
    word = "passed" if found.passed else f"failed ({len(failed)} of {len(found.verdicts)})"
    out.print(f"thresholds: {word}", highlight=False)


def judge_study(
    study: Study, wanted: ThresholdSet, out: Console, *, aborted: str | None, junit: Path | None
) -> ThresholdsFile:
    """The thresholds at every point of the study as it ended: thresholds.json, the console's
    lines, the JUnit file when asked for."""
    found = judge(study.out_dir, wanted, aborted=aborted)
    write_thresholds(study.out_dir, found)
    print_verdicts(found, out)
    if junit is not None:
        cases = threshold_cases(found, study.out_dir.name)
        searched = read_capacity(study.out_dir)
        if searched is not None:  # a capacity study: its searches' cases too
            cases = capacity_cases(searched, study.out_dir.name) + cases
        write_junit(junit, "thresholds", cases)
    return found


def raise_if_failed(found: ThresholdsFile) -> None:
    if found.passed:
        return
    failed = found.failures()
    if failed:
        first = failed[0]
        more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
        hint = (
            None
            if first.value is not None
            else (
                "the metric has no value there: tpmC needs TPC-C, per-vCPU and cost figures the "
                "target's vcpus and prices, and every run of the point must have been measured"
            )
        )
        raise ThresholdFailedError(f"threshold {first.threshold} {first.verdict} at {first.point}: "
                                   f"{first.why}{more}", hint)  # fmt: skip
    raise ThresholdFailedError(found.aborted or "the study was stopped")
