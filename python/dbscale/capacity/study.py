"""A plan with a `capacity:` section: each runnable point of the study searched in turn (its
levels recorded like any run), one capacity.json for all of them, compared in the report by
capacity, per vCPU and per dollar."""

from __future__ import annotations

from rich.console import Console

from dbscale.capacity.driver import CapacityBook, CapacityDriver
from dbscale.capacity.report import print_capacity
from dbscale.plan.study import Study
from dbscale.results.capacity_file import CapacityStudy
from dbscale.run.runner import StudyRunner
from dbscale.run.study_output import study_plan_json


def run_capacity_study(runner: StudyRunner, study: Study, out: Console) -> CapacityStudy:
    plan = study.plan.capacity
    assert plan is not None, "a capacity study has a capacity section"
    settings = plan.settings()
    book = CapacityBook(runner.results.path)
    runner.keep_going = True  # a level whose run failed is a failed level, not the end
    runner.results.write_plan(study_plan_json(study))  # what --resume checks against
    points = study.runnable_points
    failing = True
    try:
        for point in points:
            label = point.key if len(points) > 1 else ""
            found = CapacityDriver(runner, point, settings, out, book, point=label).run()
            print_capacity(out, found, runner.results.path)
        failing = False
    finally:
        runner.finish(failing=failing)
    return book.study
