"""`dbscale micro cpu`: dbscale's own CPU kernels (a linked list searched and sorted, integer
matrix arithmetic, a number-scanning state machine, a CRC over every result; see
crates/dbscale-core/src/micro) on one thread and on every CPU, repeated as the Cloud Report repeats
CoreMark (10 runs each), with the median, its 95% interval and the CV. The kernels are of
CoreMark's kinds but this is not CoreMark: the scores are iterations per second of these
kernels and are not comparable with CoreMark scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dbscale import core
from dbscale.errors import ConfigError
from dbscale.micro.results import CpuFigures, CpuResult
from dbscale.stats.confidence import median_order_statistic_ci, spread

MAX_REPETITIONS = 1_000
MIN_SECONDS, MAX_SECONDS = 0.01, 3600.0  # the core's bounds


def figures(values: Sequence[float]) -> CpuFigures:
    described = spread(values)
    interval = median_order_statistic_ci(values)
    return CpuFigures(
        runs=list(values),
        median=described.median if described else 0.0,
        ci_low=interval.low if interval else None,
        ci_high=interval.high if interval else None,
        cv_pct=described.cv_pct if described else None,
    )


def measure(
    repetitions: int,
    seconds: float,
    note: Callable[[str], None] = lambda _: None,
) -> CpuResult:
    """Single-thread and all-CPU scores, alternating, `repetitions` each."""
    if not 1 <= repetitions <= MAX_REPETITIONS:
        raise ConfigError(
            f"--repetitions: must be from 1 to {MAX_REPETITIONS}, got {repetitions}",
            "the Cloud Report runs 10; 6 or more give the median an interval",
        )
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise ConfigError(
            f"--seconds: must be from {MIN_SECONDS:g} to {MAX_SECONDS:g}, got {seconds:g}",
            "a run of 1-10 s gives a stable score (the default is 2 s)",
        )
    single: list[float] = []
    multi: list[float] = []
    threads = 0
    for i in range(repetitions):
        note(f"run {i + 1}/{repetitions}: one thread, then every CPU, {seconds:g} s each")
        single.append(core.micro_cpu(1, seconds).iterations_per_s)
        every = core.micro_cpu(0, seconds)
        threads = every.threads
        multi.append(every.iterations_per_s)
    per_vcpu = [m / threads for m in multi]
    return CpuResult(
        kernels="dbscale CPU kernels v1 (list, matrix, state machine, CRC); not CoreMark",
        seconds=seconds,
        repetitions=repetitions,
        threads=threads,
        single=figures(single),
        multi=figures(multi),
        per_vcpu=figures(per_vcpu),
    )
