"""A plan with a `capacity:` section (from a plan file, a recipe or `dbscale capacity`'s flags):
each runnable point of the study searched in turn (its levels recorded like any run), one
capacity.json for all of them, compared in the report by capacity, per vCPU and per dollar."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from dbscale.capacity.driver import CapacityBook, CapacityDriver, LevelRunner
from dbscale.capacity.report import print_capacity
from dbscale.plan.study import Study
from dbscale.results.capacity_file import CapacityStudy


def run_capacity_study(
    levels: LevelRunner, study: Study, results: Path, out: Console
) -> CapacityStudy:
    plan = study.plan.capacity
    assert plan is not None, "a capacity study has a capacity section"
    settings = plan.settings()
    book = CapacityBook(results, lambda text: out.print(text, highlight=False, soft_wrap=True))
    points = study.runnable_points
    for point in points:
        label = point.key if len(points) > 1 else ""
        found = CapacityDriver(levels, point, settings, out, book, point=label).run()
        print_capacity(out, found, results)
    return book.study
