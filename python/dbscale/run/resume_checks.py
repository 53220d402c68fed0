"""What a study checks and says around its runs: which recorded runs a resume need not repeat,
that a resume's plan is the one the runs were recorded with (micro steps too), and the words for
a run refused its clients or limited by a saturated load-generator worker."""

from __future__ import annotations

from collections.abc import Sequence

from dbscale.errors import PlanError
from dbscale.plan.micro_steps import MicroStep
from dbscale.plan.study import Study
from dbscale.results.micro_records import MicroRecord
from dbscale.results.record import RunRecord
from dbscale.targets.url import is_local_host, on_this_machine


def done_run_keys(records: Sequence[RunRecord]) -> set[str]:
    """The runs a resumed study need not repeat: recorded, not cancelled, and not cut short by
    a lost load-generator worker (the database did nothing wrong there)."""
    return {r.run_key for r in records if r.run_key and not r.cancelled and not r.worker_lost}


def check_resumable(study: Study, records: Sequence[RunRecord]) -> None:
    """Refuses to resume into a directory whose runs this plan would not have made."""
    points = study.points_by_key()
    for record in records:
        key = record.point_key
        if not key or record.warmup_kind == "data":
            continue
        point = points.get(key)
        if point is None:
            raise PlanError(
                f"{study.out_dir} holds runs of point {key}, which {study.source} does not have",
                "resume with the plan and flags the study was started with",
            )
        if record.point_fingerprint not in (None, point.fingerprint):
            raise PlanError(
                f"point {key} in {study.out_dir} ran with other settings than {study.source} "
                "gives it now",
                "resume with the plan and flags the study was started with, or start a new "
                "results directory",
            )


def check_micro_resumable(study: Study, records: Sequence[MicroRecord]) -> None:
    """Refuses to resume micro steps recorded with other settings than the plan gives now."""
    steps = {s.key: s for s in study.steps if isinstance(s, MicroStep)}
    for record in records:
        step = steps.get(record.key)
        if step is not None and record.settings and record.settings != step.fingerprint:
            raise PlanError(
                f"{step.label} in {study.out_dir} ran with other micro.{step.kind} settings than "
                f"{study.source} gives it now",
                "resume with the plan and flags the study was started with, or start a new "
                "results directory",
            )


def saturated_workers(record: RunRecord) -> list[str]:
    """Workers of a scaled-out run whose host was busy enough to have limited the load, each
    with the advice that fits where it ran: more workers on a busy machine only share its CPUs,
    and on the database's own machine they take them from the server too."""
    database_here = on_this_machine(record.target)
    lines = []
    for w in record.workers:
        if not w.saturated:
            continue
        here = w.node_ip is None or is_local_host(w.node_ip)
        if here and database_here:
            advice = (
                "it shares this machine with the database, so more workers here would take CPU "
                "from the server too: run the workers on other machines (--ray) to load it harder"
            )
        elif here:
            advice = (
                "more workers on this machine would share the same CPUs: run them on other "
                "machines (--ray), or use a larger client machine"
            )
        else:
            advice = "add Ray nodes (workers on more machines), or use larger ones"
        lines.append(
            f"{w.name}: its host's CPU was {w.host_cpu_busy_pct}% busy during the run; that load "
            f"generator may have limited the run ({advice})"
        )
    return lines


def refused_hint(record: RunRecord) -> str | None:
    """The hint for a run whose clients the server refused (None: the default hint), chosen by
    the kind of the refusal, never by its message."""
    if not record.clients_refused:
        return None
    if record.connect_error_kind == "sql":
        return (
            "the connections opened, but a statement would not prepare on them (-M prepared "
            "prepares every statement when a client connects): fix the statement the error "
            "names; under -M simple it fails each transaction instead"
        )
    if record.connect_error_kind == "connect_unavailable":
        return (
            "the server was starting, stopping or recovering, or was not the node the routing "
            "wanted (a standby, not the primary): run again once it accepts connections"
        )
    # connect_limit, or a record written before the two were told apart (no kind)
    if record.connect_error_kind not in (None, "connect_limit"):
        return None
    limit = record.server_max_connections
    setting = f"max_connections ({limit})" if limit is not None else "max_connections"
    return (
        f"the server accepts at most {setting} connections, some of them reserved or in use: "
        f"run fewer clients than that, or raise max_connections on the server "
        f"(MySQL/MariaDB say 'Too many connections')"
    )
