"""`dbscale capacity`: its options turned into a study's one point and the search's settings,
then the search run against the opened target (capacity/driver.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from dbscale.cli.consoles import data_console, message_console
from dbscale.errors import ConfigError
from dbscale.plan.build import RunOptions

DEFAULT_CLIENTS = "16"  # connections an open-model search offers its rates over


def capacity(
    options: RunOptions,
    *,
    slos: Sequence[str],
    max_errors: str,
    knob: str,
    resolution: str,
    settle: str,
    measure: str,
    confirm: int,
    env: Mapping[str, str],
    now: datetime,
) -> None:
    from dbscale import __version__
    from dbscale.capacity.driver import CapacityBook, CapacityDriver
    from dbscale.capacity.report import print_capacity
    from dbscale.cli.commands import _allow_open_files, _open_targets
    from dbscale.plan.build import build_study
    from dbscale.plan.catalog import Catalog
    from dbscale.plan.objectives import CapacityPlan, Knob
    from dbscale.report.command import report_after_run
    from dbscale.results.directory import ResultsDir
    from dbscale.run.output_format import OutputFormat
    from dbscale.run.progress import make_progress
    from dbscale.run.runner import StudyRunner
    from dbscale.run.study_output import study_plan_json

    if not slos:
        raise ConfigError("dbscale capacity needs a latency objective",
                          "give --slo 'p99<=20ms' (repeatable)")  # fmt: skip
    if knob not in ("rate", "clients", "warehouses"):
        raise ConfigError(
            f"--knob {knob!r} is not rate, clients or warehouses",
            "rate: the open model's offered rate; clients: closed-loop clients; warehouses: "
            "TPC-C's active warehouses",
        )
    if not 0 <= confirm <= 20:
        raise ConfigError(f"--confirm {confirm} must be from 0 to 20", "e.g. --confirm 3")
    settings = CapacityPlan(
        slo=list(slos), max_errors=max_errors, knob=Knob(knob), resolution=resolution,
        settle=settle, measure=measure, confirm=confirm,
    ).settings()  # fmt: skip
    if not options.clients:
        options = _with(options, clients=[DEFAULT_CLIENTS] if knob == "rate" else ["1"])
    options = _with(options, repeat=1, warmup_runs=0, keep_going=True, warmup="0")
    study = build_study(options, load_catalog=Catalog.load, env=env, now=now)
    points = study.runnable_points
    if len(points) != 1:
        raise ConfigError(f"dbscale capacity searches one configuration; these options give "
                          f"{len(points)} points",
                          "give one client count and one target (no lists, no matrix)")  # fmt: skip
    _allow_open_files()
    err, out = message_console(), data_console()
    results = ResultsDir(study.out_dir, resume=options.resume is not None)
    try:
        with _open_targets(study, err, env) as opened:
            lines = OutputFormat.LINES  # a line per level's run; the search's lines between
            runner = StudyRunner(study, opened, results=results,
                                 progress=make_progress(err, out=out, output_format=lines),
                                 out=out, version=__version__, output_format=lines)  # fmt: skip
            results.write_plan(study_plan_json(study))  # what --resume checks against
            failing = True
            try:
                book = CapacityBook(results.path)
                found = CapacityDriver(runner, points[0], settings, out, book).run()
                failing = False
            finally:
                runner.finish(failing=failing)
            print_capacity(out, found, results.path)
    finally:
        report_after_run(results.path, env=env, err=err)


def _with(options: RunOptions, **changes: object) -> RunOptions:
    from dataclasses import replace

    return replace(options, **changes)  # type: ignore[arg-type]
