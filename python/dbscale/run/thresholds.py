"""A study's thresholds at its end and, with `abort_on_fail`, after each run: judged from the
results directory (verdicts/judge.py), written to thresholds.json, printed, and the exit code."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from dbscale.core.result import Interval
from dbscale.errors import ConfigError, ThresholdFailedError
from dbscale.plan.study import Study
from dbscale.results.capacity_file import read_capacity
from dbscale.verdicts.baseline import check_baseline
from dbscale.verdicts.judge import ThresholdSet, judge, wanted_baseline
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


# What a run's per-second intervals say of a metric as it goes (the others wait for its end).
def _errors_pct(interval: Interval) -> float | None:
    attempted = interval.transactions + interval.failed
    return 100.0 * interval.failed / attempted if attempted else None


def _percentile(name: str) -> Callable[[Interval], float | None]:
    return lambda i: getattr(i.latency_ms, name) if i.latency_ms is not None else None


IN_RUN: dict[str, Callable[[Interval], float | None]] = {
    "tps": lambda i: i.tps, "errors_pct": _errors_pct, "p50_ms": _percentile("p50"),
    "p95_ms": _percentile("p95"), "p99_ms": _percentile("p99"),
}  # fmt: skip
SUSTAINED = 2  # a threshold broken in this many intervals in a row is clearly broken


class AbortWatch:
    """`abort_on_fail`: a threshold clearly broken past the grace period stops the study. While
    a run goes: each threshold a second can say (tps, errors_pct, p50/p95/p99) broken in its last
    SUSTAINED intervals; when a run ends: a point's verdict *fail* (its whole interval, or its one
    run, beyond the limit). `stopped` keeps why."""

    def __init__(self, wanted: ThresholdSet, grace_s: float, directory: Path) -> None:
        self.wanted, self.grace_s, self.directory = wanted, grace_s, directory
        self.started = time.monotonic()
        self.stopped: str | None = None
        self.baseline = wanted_baseline(wanted)  # read once, for every run's checks

    def _elapsed(self) -> float | None:
        elapsed = time.monotonic() - self.started
        return elapsed if elapsed >= self.grace_s else None

    def in_run(self, point_key: str) -> Callable[[Sequence[Interval]], str | None]:
        """The check of one run of `point_key`, given its intervals so far."""
        checks = []
        for threshold in self.wanted.thresholds:
            limit = threshold.limit
            if threshold.needs_baseline and self.baseline is not None:
                base = self.baseline.by_point.get((threshold.metric.name, point_key))
                limit = None if base is None else (threshold.factor or 1.0) * base
            if limit is not None and threshold.metric.name in IN_RUN:
                checks.append((threshold, limit, IN_RUN[threshold.metric.name]))

        def check(intervals: Sequence[Interval]) -> str | None:
            elapsed = self._elapsed()
            recent = [i for i in intervals if not i.drain][-SUSTAINED:]
            if elapsed is None or len(recent) < SUSTAINED:
                return None
            for threshold, limit, read in checks:
                values = [read(i) for i in recent]
                if all(v is not None and not threshold.holds(v, limit) for v in values):
                    seen = ", ".join(f"{v:,.4g}" for v in values if v is not None)
                    self.stopped = (f"stopped after {elapsed:.0f} s by --abort-on-fail: "
                                    f"{threshold.text} broken at {point_key} in the last "
                                    f"{SUSTAINED} seconds ({seen})")  # fmt: skip
                    return self.stopped
            return None

        return check

    def reason(self) -> str | None:
        """After a run: why the study stops (a run stopped as it went, or a point's fail)."""
        if self.stopped is not None:
            return self.stopped
        elapsed = self._elapsed()
        if elapsed is None:
            return None
        judged = judge(self.directory, self.wanted, baseline=self.baseline)
        broken = [v for v in judged.verdicts if v.verdict == FAIL]
        if not broken:
            return None
        first = broken[0]
        self.stopped = (f"stopped after {elapsed:.0f} s by --abort-on-fail: {first.threshold} "
                        f"broken at {first.point}: {first.why}")  # fmt: skip
        return self.stopped


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
    """Exit 11 when a threshold failed or --abort-on-fail stopped the study (said first)."""
    if found.passed:
        return
    if found.aborted is not None:
        raise ThresholdFailedError(found.aborted, "the runs so far are kept (thresholds.json "
                                   "says why it stopped); --resume DIR runs the rest")  # fmt: skip
    failed = found.failures()
    first = failed[0]
    more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    hint = None if first.value is not None else (
        "the metric has no value there: tpmC needs TPC-C, per-vCPU and cost figures the "
        "target's vcpus and prices, and a point needs a measured run")  # fmt: skip
    raise ThresholdFailedError(f"threshold {first.threshold} {first.verdict} at {first.point}: "
                               f"{first.why}{more}", hint)  # fmt: skip
