"""What each CLI command does, once its options are parsed: resolve the plan, open the targets,
call the core, write and print results. Messages go to stderr, data to stdout.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from dbscale import interrupts
from dbscale.cli.consoles import data_console, message_console
from dbscale.errors import Cancelled, ConfigError, ResultsError
from dbscale.run.output_format import OutputFormat

# Each command imports what only it needs inside its function: start-up time is paid by every
# command (a `prepare` need not load the report's or the comparison's modules).
if TYPE_CHECKING:
    from dbscale.live.server import LiveEndpoints
    from dbscale.modes import TlsMode
    from dbscale.plan.build import RunOptions
    from dbscale.plan.catalog import WorkloadInfo
    from dbscale.plan.data import DataPlan
    from dbscale.plan.study import Study
    from dbscale.results.compare import ComparisonOptions
    from dbscale.targets import OpenTarget
    from dbscale.targets.lifecycle import TargetPool


def run(
    options: RunOptions,
    *,
    env: Mapping[str, str],
    now: datetime,
    dry_run: bool,
    output_format: OutputFormat = OutputFormat.AUTO,
    junit: Path | None = None,
) -> None:
    """`dbscale run`: the study's runs against its targets, results appended as they finish;
    its thresholds judged at the end (exit 11 when one failed)."""
    from dbscale import __version__
    from dbscale.plan.build import build_study
    from dbscale.plan.catalog import Catalog
    from dbscale.report.command import report_after_run
    from dbscale.results.directory import ResultsDir
    from dbscale.run.progress import make_progress
    from dbscale.run.resume_checks import check_resumable, done_run_keys
    from dbscale.run.runner import StudyRunner
    from dbscale.run.study_output import print_dry_run, print_skipped
    from dbscale.run.thresholds import AbortWatch, judge_study, raise_if_failed, study_thresholds

    study = build_study(options, load_catalog=Catalog.load, env=env, now=now)
    wanted = study_thresholds(study)
    if junit is not None and wanted is None and study.plan.capacity is None:
        raise ConfigError("--junit needs thresholds to report on",
                          "add --threshold 'p99_ms<20' (or a plan's thresholds:)")  # fmt: skip
    resume = options.resume is not None
    _allow_open_files()
    if dry_run:
        done: set[str] = set()
        if resume and (study.out_dir / "runs.jsonl").is_file():
            found = ResultsDir(
                study.out_dir, resume=True, repair=False
            )  # a dry run changes nothing
            done = done_run_keys(found.records)
        print_dry_run(data_console(), study, study.pending(done))
        _dry_run_limits(study)
        checked = _serve_live(study, message_console(), env)
        if checked is not None:
            checked.close()  # the address can be served: freed again
        return
    err = message_console()
    live = _serve_live(study, err, env)  # bound before anything runs: a taken port stops here
    results = ResultsDir(study.out_dir, resume=resume)
    if resume and study.plan.capacity is None:
        # Before anything starts (a server, a report): the runs there must be this plan's.
        check_resumable(study, results.records)
    if results.repaired:
        err.print(f"note: {results.repaired}", highlight=False, soft_wrap=True)
    print_skipped(err, study)
    ended = False
    judged = None
    settings = study.plan.thresholds
    abort = None
    if wanted is not None and settings is not None and settings.abort_on_fail:
        abort = AbortWatch(wanted, settings.grace, study.out_dir)
    try:
        with _open_targets(study, err, env) as opened:
            if study.demo:
                _ensure_demo_data(study, opened["embedded"], err)
            out = data_console()
            searching = study.plan.capacity is not None
            shape = OutputFormat.LINES if searching else output_format
            runner = StudyRunner(
                study,
                opened,
                results=results,
                progress=make_progress(err, out=out, output_format=shape),
                out=out,
                version=__version__,
                output_format=shape,
                # a capacity search's failed level is a failed level, not the end
                keep_going=study.plan.keep_going or searching,
                watcher=live.figures if live is not None else None,
                abort=abort,
            )
            if searching:  # each point searched for its capacity (docs/capacity.md)
                from dbscale.capacity.study import run_capacity_study

                with runner.searching() as levels:
                    run_capacity_study(levels, study, results.path, out, junit=junit)
            else:
                runner.run()
            if wanted is not None:  # before the report, whose headline says which passed
                judged = judge_study(study, wanted, out, aborted=runner.aborted, junit=junit)
        ended = True
    finally:  # however the study ended (Ctrl-C too): the report of what finished
        report_after_run(results.path, env=env, err=err)
        if live is not None:
            _close_live(live, study, err, linger=ended)
    if judged is not None:
        raise_if_failed(judged)


def _serve_live(study: Study, err: Console, env: Mapping[str, str]) -> LiveEndpoints | None:
    """The study's metrics endpoint and live page when its plan asks for them."""
    settings = study.plan.live
    if settings is None or (settings.metrics is None and settings.web is None):
        return None
    from dbscale.live.figures import StudyFigures
    from dbscale.live.server import PageSources, serve_study
    from dbscale.report.bundle import javascript_bundle
    from dbscale.report.writer import default_cache_dir, write_report

    cache = default_cache_dir(env)
    figures = StudyFigures(study.plan.name or study.out_dir.name, str(study.out_dir))
    page = PageSources(bundle=lambda: javascript_bundle(cache),
                       report=lambda: write_report(study.out_dir, cache_dir=cache))  # fmt: skip
    live = serve_study(settings.metrics, settings.web, figures, page)
    where = "" if live.loopback_only else " (beyond this machine: anyone who reaches it)"
    for name, url in (("page", live.page_url), ("metrics", live.metrics_url)):
        if url is not None:
            err.print(f"{name}: {url}{where}", highlight=False, soft_wrap=True)
    return live


def _close_live(live: LiveEndpoints, study: Study, err: Console, *, linger: bool) -> None:
    settings = study.plan.live
    linger_s = 0.0
    if linger and settings is not None:
        linger_s = float("inf") if settings.linger == "forever" else float(settings.linger)
    url = live.page_url or live.metrics_url
    if linger_s == float("inf"):
        err.print(f"still serving {url} until Ctrl-C", highlight=False)
    elif linger_s > 0:
        err.print(f"still serving {url} for {linger_s:g} s", highlight=False)
    live.close(linger_s)


DRY_RUN_LIMITS_S = 3.0  # how long a dry run waits to read a target's limits


def _dry_run_limits(study: Study) -> None:
    """The limits of the targets reachable by URL (private ones are not started by a dry run)
    against the points planned on them."""
    from dbscale.run.target_limits import read_and_warn
    from dbscale.targets.url import is_private_url

    err = message_console()
    for target in study.plan.targets_or_embedded():
        if is_private_url(target.url):
            continue
        points = [p for p in study.runnable_points if p.target.name == target.name]
        read_and_warn(target.url, target.name, points,
                      lambda text: err.print(text, highlight=False, soft_wrap=True),
                      within_s=DRY_RUN_LIMITS_S,
                      loads=study.plan.prepare.load != "never")  # fmt: skip


def _allow_open_files() -> None:
    """Each connection is a file descriptor: the soft limit (often 1024) goes up to the hard one,
    so thousands of clients do not fail on EMFILE."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@contextmanager
def _open_targets(study: Study, err: Console, env: Mapping[str, str]) -> Iterator[TargetPool]:
    """Each target is entered (hooks, a local server in its shape) when a step first needs it;
    one that fails is skipped, and reported again once the others have run."""
    from dbscale.targets.lifecycle import TargetPool
    from dbscale.targets.spec import describe_target

    for target in study.targets:
        err.print(f"target {target.name}: {describe_target(target)}", highlight=False)
    with TargetPool(
        study.targets, study.out_dir, env=env, note=lambda text: err.print(text, highlight=False)
    ) as pool:
        yield pool
    problem = pool.final_error()  # a target that failed, or a teardown that did
    if problem is not None:
        raise problem


def _ensure_demo_data(study: Study, target: OpenTarget, err: Console) -> None:
    """The demo prepares the embedded server's TPC-B data unless that scale is already there."""
    from dbscale import core
    from dbscale.plan.build import target_spec
    from dbscale.plan.data import DataPlan
    from dbscale.run import data

    if target.server is None:
        return  # someone else's server: the user prepares it
    point = study.runnable_points[0]
    scale = point.params.get("scale")
    if data.tpcb_scale_loaded(target.url) == scale:
        err.print(f"reusing the embedded server's {point.workload} data (scale {scale})")
        return
    err.print(f"preparing {point.workload} scale {scale} on the embedded server ...")
    config = DataPlan(point.workload, point.params, target_spec(point.target)).config(target.url)
    data.print_data_summary(err, "prepare", core.prepare(config))


def data_step(action: str, plan: DataPlan) -> None:
    """`dbscale prepare` (load the workload's tables) or `dbscale cleanup` (drop them)."""
    from dbscale import core
    from dbscale.run import data
    from dbscale.targets import open_target

    err = message_console()
    doing = "preparing" if action == "prepare" else "dropping the tables of"
    err.print(f"{doing} {plan.workload} on {plan.target.describe()} ...")
    step = core.prepare if action == "prepare" else core.cleanup
    with open_target(plan.target) as target:
        try:
            summary = step(plan.config(target.url))
        except KeyboardInterrupt:
            left = "partly loaded" if action == "prepare" else "partly dropped"
            raise Cancelled(
                f"{action} of {plan.workload} cancelled by {interrupts.cause()}: its tables "
                f"are {left}",
                f"dbscale {action} {plan.workload} --target ... again does it whole",
            ) from None
    data.print_data_summary(err, action, summary)


def check_data(plan: DataPlan) -> None:
    """`dbscale check`: the consistency conditions, one line each; exit 7 when one fails."""
    from dbscale import core
    from dbscale.errors import InconsistentDataError
    from dbscale.targets import open_target

    out = data_console()
    message_console().print(f"checking {plan.workload} on {plan.target.describe()} ...")
    with open_target(plan.target) as target:
        report = core.check(plan.config(target.url))
    for condition in report.conditions:
        mark = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}.get(condition.status, "?   ")
        line = f"{mark} {condition.id:<9} {condition.description} ({condition.seconds:.2f} s)"
        out.print(line, highlight=False, markup=False, soft_wrap=True)
        for example in condition.examples:
            out.print(f"       {example}", highlight=False, markup=False)
        if condition.note:
            out.print(f"       {condition.note}", highlight=False, markup=False, soft_wrap=True)
    failed = [c.id for c in report.conditions if c.status == "fail"]
    if failed:
        where = "the lines above name the offending warehouses, districts or customers"
        if not report.warehouses:  # TPC-H's answers
            where = "the lines above show the rows that differ from the published answer"
        raise InconsistentDataError(
            f"{len(failed)} consistency condition(s) fail: {', '.join(failed)}",
            f"{where}; reload with `dbscale prepare` if the data was not changed by a benchmark",
        )
    if not any(c.status == "pass" for c in report.conditions):
        # TPC-H off scale factor 1: nothing published to compare with
        out.print(f"{len(report.conditions)} queries ran; no published answers to compare with "
                  f"({report.seconds:.1f} s)", highlight=False)  # fmt: skip
        return
    size = f"{report.warehouses} warehouses, " if report.warehouses else ""
    out.print(
        f"all {len(report.conditions)} conditions hold ({size}{report.seconds:.1f} s)",
        highlight=False,
    )


def plan_data(
    workload: str,
    *,
    targets: list[str],
    set_params: list[str],
    tls: TlsMode | None,
    env: Mapping[str, str],
) -> DataPlan:
    from dbscale.plan.catalog import Catalog
    from dbscale.plan.data import build_data_plan

    if len(targets) > 1:
        raise ConfigError(
            f"--target given {len(targets)} times: prepare and cleanup act on one target",
            "run the command once per target",
        )
    return build_data_plan(
        workload,
        target=targets[0] if targets else None,
        set_params=set_params,
        tls=tls,
        load_catalog=Catalog.load,
        env=env,
    )


def recipes() -> None:
    """`dbscale recipes`: the bundled plans and what they reproduce."""
    from dbscale.plan.recipes import recipe_info, recipe_names

    out = data_console()
    for name in recipe_names():
        info = recipe_info(name)
        out.print(f"[bold]{name}[/bold]: {info.description}", soft_wrap=True)
        out.print(f"  reproduces {info.seed_study}", highlight=False, soft_wrap=True)
        out.print(f"  dbscale run --recipe {name} --target URL [--quick] [--dry-run]")
        out.print()


def compare(
    a: Path,
    b: Path | None,
    options: ComparisonOptions,
    as_json: bool,
    html: Path | None = None,
    env: Mapping[str, str] | None = None,
    junit: Path | None = None,
    fail_on_worse: bool = False,
) -> None:
    """`dbscale compare`: per matching point, the change from A to B and whether it is real;
    with `fail_on_worse`, exit 9 when a point is worse."""
    from dbscale.report import default_cache_dir, render_compare_html
    from dbscale.results.compare import METRICS as COMPARED
    from dbscale.results.compare import compare_dirs, print_comparison
    from dbscale.stats.comparison import WORSE

    comparison = compare_dirs(a, b, options)
    if html is not None:
        page = render_compare_html(comparison, cache_dir=default_cache_dir(env or {}))
        try:
            html.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise ResultsError(f"cannot write {html}: {exc}", "choose a writable path") from None
        message_console().print(f"comparison page: {html}", highlight=False, soft_wrap=True)
    out = data_console()
    if as_json:
        out.print_json(json.dumps(comparison.model_dump(), default=str))
    else:
        print_comparison(out, comparison)
    if junit is not None:
        from dbscale.verdicts.junit import comparison_cases, write_junit

        write_junit(junit, "compare", comparison_cases(comparison))
    worse = [(p.point, n) for p in comparison.points for n, _higher in COMPARED
             if p.metric(n).verdict == WORSE]  # fmt: skip
    if fail_on_worse and worse:
        from dbscale.errors import RegressionFoundError

        more = f" and {len(worse) - 1} more" if len(worse) > 1 else ""
        raise RegressionFoundError(f"B is worse than A: {worse[0][1]} at {worse[0][0]}{more}",
                                   "see the comparison above")  # fmt: skip


def report(directory: Path, *, images: bool, env: Mapping[str, str]) -> None:
    """`dbscale report DIR`: the results as one self-contained HTML page (and images)."""
    from dbscale.report.command import report as draw_report

    draw_report(directory, images=images, env=env, out=message_console())


# The widest a listing of names and descriptions gets, whatever the console's width.
LIST_WIDTH = 100


def workloads(name: str | None, as_json: bool) -> None:
    """`dbscale workloads [NAME]`: the native catalog, a line per workload, or one workload's
    parameters."""
    from dbscale.plan.catalog import Catalog
    from dbscale.results.text_tables import text_table

    catalog = Catalog.load()
    out = data_console()
    chosen = [catalog.resolve(name)] if name else list(catalog.workloads.values())
    if as_json:
        out.print_json(json.dumps({info.name: _info_json(info) for info in chosen}))
        return
    if name is None:
        table = text_table(
            ("workload", "aliases", "what it runs"), left={"workload", "aliases", "what it runs"}
        )
        for info in chosen:
            table.add_row(info.name, ", ".join(info.aliases) or "-", info.description)
        out.print(table, width=min(out.width, LIST_WIDTH))  # descriptions wrap
        out.print("`dbscale workloads NAME` shows a workload's --set parameters", highlight=False)
        return
    [info] = chosen
    aliases = f" (aliases: {', '.join(info.aliases)})" if info.aliases else ""
    out.print(f"[bold]{info.name}[/bold]{aliases}: {info.description}")
    table = text_table(
        ("--set key", "default", "meaning"), left={"--set key", "default", "meaning"}
    )
    for param in info.params.values():
        table.add_row(param.name, json.dumps(param.default), param.doc)
    out.print(table)


def _info_json(info: WorkloadInfo) -> dict[str, object]:
    return asdict(info)


def version() -> None:
    """`dbscale version`: this package and, if built, the native core."""
    from dbscale import __version__, core

    out = data_console()
    out.print(f"dbscale {__version__}")
    try:
        core_version = core.version()
    except Exception as exc:  # a missing core is reported, not fatal, here
        core_version = f"not available ({type(exc).__name__})"
    out.print(f"dbscale._core {core_version}")
