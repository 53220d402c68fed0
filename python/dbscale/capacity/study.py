"""A plan with a `capacity:` section (from a plan file, a recipe or `dbscale capacity`'s flags):
each runnable point of the study searched in turn (its levels recorded like any run), one
capacity.json for all of them, compared in the report by capacity, per vCPU and per dollar."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from dbscale.capacity.book import CapacityBook
from dbscale.capacity.driver import CapacityDriver, LevelRunner
from dbscale.capacity.report import print_capacity
from dbscale.errors import NoCapacityError
from dbscale.plan.objectives import CapacitySettings
from dbscale.plan.study import Study
from dbscale.results.capacity_file import CapacityFile, CapacityStudy
from dbscale.verdicts.junit import capacity_cases, write_junit


def run_capacity_study(
    levels: LevelRunner, study: Study, results: Path, out: Console, *, junit: Path | None = None
) -> CapacityStudy:
    """Each point searched; with `junit`, a case per search and objective (written before a
    search without an answer ends the study with exit 10)."""
    plan = study.plan.capacity
    assert plan is not None, "a capacity study has a capacity section"
    settings = plan.settings()
    book = CapacityBook(results, lambda text: out.print(text, highlight=False, soft_wrap=True))
    points = study.runnable_points
    unanswered: list[CapacityFile] = []
    for point in points:
        label = point.key if len(points) > 1 else ""
        found = CapacityDriver(levels, point, settings, out, book, point=label).run()
        print_capacity(out, found, results)
        if found.capacity is None or any(o.host_limited for o in found.objectives):
            unanswered.append(found)
    if junit is not None:
        write_junit(junit, "capacity", capacity_cases(book.study, results.name))
    if unanswered:
        raise _no_capacity(unanswered, settings)
    return book.study


def _no_capacity(unanswered: list[CapacityFile], settings: CapacitySettings) -> NoCapacityError:
    """The error a search without an answer it can stand by ends with, and what to run next."""
    names = ", ".join(f.point or f.workload for f in unanswered)
    needed = [o.measure_needed_s for f in unanswered for o in f.objectives if o.measure_needed_s]
    if needed:
        longest = max(needed)
        return NoCapacityError(
            f"the capacity search of {names} is undecided: a level gathered too few "
            "transactions in the longest measure",
            f"search again with --measure {settings.measure_min_s:g}s..{longest:g}s "
            "(--resume DIR keeps the levels measured so far)",
        )
    drifted = [o for f in unanswered for o in f.objectives if o.drift_high is not None]
    if drifted:
        return NoCapacityError(
            f"the capacity search of {names} has no answer: the target got slower during the "
            f"search (level {drifted[0].drift_high:g} passed, then failed when measured again)",
            "find what slowed it (checkpoints, vacuum, a growing table, the host: `dbscale run` "
            "at that rate for minutes shows its latency over time), then search again into a new "
            "--out directory",
        )
    if any(o.host_limited for f in unanswered for o in f.objectives):
        return NoCapacityError(
            f"the capacity search of {names} failed levels while other processes took a "
            "material share of the host's CPU: the host may have been the limit",
            "search again on a quiet host (or give the server and dbscale CPUs of their own)",
        )
    return NoCapacityError(
        f"no load level of {names} met every objective, down to the search's floor",
        "see each level's reasons above: a looser objective, fewer clients or a bigger target",
    )
