"""A study's micro step: run on its host (micro/on_host.py), its figures taken from the result
(micro/figures.py), appended to micro.jsonl at once, and one line on the console. A micro step
cut by Ctrl-C is not recorded: its figures need its whole run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rich.console import Console

from dbscale import interrupts
from dbscale.errors import Cancelled
from dbscale.micro.figures import figures_of
from dbscale.micro.on_host import (
    Place,
    client_place,
    local_place,
    loopback_place,
    remote_place,
    run_micro,
)
from dbscale.plan.micro_steps import MicroStep
from dbscale.results.micro_records import MicroFigureSummary, MicroRecord, append_micro
from dbscale.results.text_tables import text_table
from dbscale.targets import OpenTarget
from dbscale.targets.spec import TargetInfo, target_info
from dbscale.values import iso_utc, utc_now


def step_place(step: MicroStep, opened: Mapping[str, OpenTarget]) -> Place:
    target = step.target
    if target is None:
        return client_place(step.settings)
    if target.is_local:
        return local_place(opened[target.name])
    if target.host is None or target.host.command is None:
        # the plan's schema lets only a target on this machine go without host.command
        return loopback_place(
            opened[target.name].url, target.host.disk_dir if target.host else None
        )
    return remote_place(target.host, opened[target.name].url)


def run_micro_step(
    step: MicroStep,
    opened: Mapping[str, OpenTarget],
    *,
    version: str,
    note: Callable[[str], None],
) -> MicroRecord:
    place = step_place(step, opened)
    started = utc_now()
    result = run_micro(step.kind, place, step.settings, note)
    info = target_info(step.target) if step.target is not None else TargetInfo(name="client")
    if place.cpus is not None:
        info = info.model_copy(update={"vcpus": len(place.cpus)})
    return MicroRecord(
        key=step.key, kind=step.kind, place=step.place, repetition=step.repetition,
        started_at=iso_utc(started), ended_at=iso_utc(utc_now()), dbscale_version=version,
        target_info=info.record(), where=place.describe(), settings=step.fingerprint,
        result=result.record(), figures=figures_of(step.kind, result.record()),
    )  # fmt: skip


def keep_micro_step(
    step: MicroStep,
    opened: Mapping[str, OpenTarget],
    *,
    results: Path,
    resume: str,
    version: str,
    note: Callable[[str], None],
) -> MicroRecord:
    """Runs the step and appends its record to the study's micro.jsonl."""
    note(f"{step.label} (~{step.estimate_s:.0f} s) ...")
    try:
        record = run_micro_step(step, opened, version=version, note=note)
    except KeyboardInterrupt:
        raise Cancelled(
            f"cancelled by {interrupts.cause()} during {step.label}; a micro-benchmark's "
            "figures need its whole run, so this one is not recorded",
            f"what ran before it is in {results}; {resume} runs it again and finishes the study",
        ) from None
    append_micro(results, record)
    return record


def _headline_figures(record: MicroRecord) -> list[str]:
    names = {
        "cpu": ("cpu one thread", "cpu per vCPU"),
        "disk": ("wr-iops-tpcc-fsync write IOPS", "rd-iops read IOPS", "wr-iops write IOPS",
                 "wr-latency write p99", "wr-iops-tpcc-fsync fsync p99"),
        "net": ("net request/response", "net request/response p99", "net streams"),
    }[record.kind]  # fmt: skip
    shown = []
    for name in names:
        figure = record.figures.get(name)
        if figure is not None and figure.values:
            median = sorted(figure.values)[len(figure.values) // 2]
            shown.append(f"{name} {median:,.1f} {figure.unit}")
    return shown


def print_micro_record(out: Console, record: MicroRecord, label: str) -> None:
    figures = "; ".join(_headline_figures(record)) or "no figures"
    out.print(f"{label}: {figures}", highlight=False, soft_wrap=True)


def print_micro_summary(out: Console, rows: Sequence[MicroFigureSummary]) -> None:
    """The micro figures per host: median, its interval and CV over the samples."""
    if not rows:
        return
    table = text_table(("host", "figure", "median", "95% CI", "CV %", "n", "unit"),
                       left={"host", "figure", "95% CI", "unit"})  # fmt: skip
    for row in rows:
        ci = (f"[{row.ci_low:,.1f}, {row.ci_high or 0:,.1f}]" if row.ci_low is not None
              else "-")  # fmt: skip
        cv = f"{row.cv_pct:.2f}" if row.cv_pct is not None else "-"
        median = f"{row.median:,.1f}" if row.median is not None else "-"
        table.add_row(row.place, row.figure, median, ci, cv, str(row.samples),
                      row.unit)  # fmt: skip
    out.print("micro-benchmarks (micro.jsonl):", highlight=False)
    out.print(table)
