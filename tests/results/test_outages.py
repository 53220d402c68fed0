"""Outages from per-second intervals: zero completions while clients reconnect, or a closed
loop stalled for two seconds; paced runs (TPC-C's waits, an open model) may have empty seconds."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from dbscale.core.config import TargetConfig, WorkloadConfig, make_run_config
from dbscale.results.directory import RunMeta, make_record
from dbscale.results.outages import find_gaps, find_outages
from dbscale.results.points import summarize_points
from tests.synthetic import make_record as synthetic_record
from tests.synthetic import typed


def with_seconds(tps: list[int], errors: list[int], **extra: Any) -> dict[str, Any]:
    rng = random.Random(len(tps))
    record = synthetic_record({}, float(sum(tps)) / len(tps), rng=rng, seconds=len(tps))
    record["intervals"] = [
        {"t_s": float(i + 1), "transactions": n, "tps": float(n), "errors": e}
        for i, (n, e) in enumerate(zip(tps, errors, strict=True))
    ]
    record["transactions"] = sum(tps)
    record.update(extra)
    return record


def _meta() -> RunMeta:
    config = make_run_config(target=TargetConfig(url="postgresql://u@h/db"),
                             workload=WorkloadConfig(name="tpcb"))  # fmt: skip
    now = datetime.now(UTC)
    return RunMeta(started_at=now, ended_at=now, config=config, warmup=False,
                   dbscale_version="t", cancelled=False)  # fmt: skip


def test_a_server_down_for_most_of_a_run_is_an_outage_with_its_time() -> None:
    seconds = with_seconds([900, 0, 0, 0, 0, 0, 880, 910, 0, 0], [0, 80, 60, 70, 50, 0, 0, 0, 0, 0])
    [record] = typed([seconds])
    outages = find_outages(record)
    assert [(o.start_s, o.length_s, o.errors) for o in outages] == [(1.0, 5.0, 260), (8.0, 2.0, 0)]


def test_paced_runs_may_have_quiet_seconds_but_not_errors_with_nothing_done() -> None:
    quiet = with_seconds([5, 0, 0, 0, 4], [0, 0, 0, 0, 0], rate_tps=3.0)
    assert find_outages(typed([quiet])[0]) == []
    refused = with_seconds([5, 0, 0, 4], [0, 3, 0, 0], rate_tps=3.0)
    assert [o.length_s for o in find_outages(typed([refused])[0])] == [2.0]
    steady = with_seconds([900, 880, 910, 905], [0, 0, 0, 0])
    assert find_outages(typed([steady])[0]) == []


def test_an_outage_run_is_marked_and_left_out_of_its_point_unless_counted() -> None:
    down = with_seconds(
        [900, 0, 0, 0, 0, 0, 880, 910, 905, 900], [0, 80, 60, 70, 50, 40, 0, 0, 0, 0]
    )
    [native] = typed([down])
    meta = _meta()
    record = make_record(native, meta)
    assert record.verdict.status == "outage"
    assert record.verdict.message.startswith(
        "no transaction completed for 5.0 s from 1.0 s (300 connection or query errors)"
    )
    assert record.outages is not None and record.measured is False
    clean = typed([with_seconds([900, 910, 905, 900], [0, 0, 0, 0])])[0]
    [point] = summarize_points([record, clean])
    assert point.runs == 1 and "1 outage run(s) left out" in point.flags
    counted = make_record(native, replace(meta, count_outages=True))
    assert counted.verdict.status == "outage" and counted.measured is True


def test_a_wait_with_every_client_connected_is_a_stall_and_counts() -> None:
    held = with_seconds([900, 0, 0, 0, 880], [0, 0, 0, 0, 0], clients=4)
    for interval in held["intervals"]:
        interval["clients_connected"] = 4
    [native] = typed([held])
    gaps = find_gaps(native)
    assert gaps.outages == [] and [(s.start_s, s.length_s) for s in gaps.stalls] == [(1.0, 3.0)]
    meta = _meta()
    record = make_record(native, meta)
    assert record.verdict.status == native.verdict.status and record.measured
    assert record.stalls is not None and record.stalls[0].length_s == 3.0
    # The same gap with clients that lost their connections is an outage.
    gone = with_seconds([900, 0, 0, 0, 880], [0, 0, 0, 0, 0], clients=4)
    for interval in gone["intervals"]:
        interval["clients_connected"] = 4 if interval["transactions"] else 0
    assert [o.length_s for o in find_gaps(typed([gone])[0]).outages] == [3.0]


def test_a_gap_the_clients_deadlines_ended_is_an_outage_not_a_stall() -> None:
    """A server frozen for 3 s: every client connected and no error inside the gap, but the
    second after it holds their client timeouts. The server stopped answering (issue 40)."""
    frozen = with_seconds([900, 0, 0, 0, 700], [0, 0, 0, 0, 4], clients=4)
    frozen["errors"] = {"total": 4, "by_class": {"client_timeout": 4}}
    for interval in frozen["intervals"]:
        interval["clients_connected"] = 4
    gaps = find_gaps(typed([frozen])[0])
    assert gaps.stalls == [] and [(o.length_s, o.errors) for o in gaps.outages] == [(3.0, 4)]


def test_a_lock_wait_that_ends_in_a_deadlock_is_not_an_outage() -> None:
    """PostgreSQL finds a deadlock after deadlock_timeout (1 s): two clients of a short sysbench
    run can both wait a whole second and get `deadlock detected`. The server answered; every
    client stayed connected: no outage. The same second with a lost connection is one."""
    both = {"clients": 2}
    waited = with_seconds([356, 0, 400], [6, 1, 0], **both)
    waited["errors"] = {"total": 8, "by_class": {"deadlock": 2, "unique_violation": 6}}
    for interval in waited["intervals"]:
        interval["clients_connected"] = 2
    assert find_gaps(typed([waited])[0]).outages == []
    lost = {**waited, "errors": {"total": 3, "by_class": {"deadlock": 2, "connection_lost": 1}}}
    assert [o.length_s for o in find_gaps(typed([lost])[0]).outages] == [1.0]
    long = with_seconds([356, 0, 0, 0, 400], [0, 1, 0, 1, 0], **both)
    long["errors"] = {"total": 2, "by_class": {"deadlock": 2}}
    for interval in long["intervals"]:
        interval["clients_connected"] = 2
    gaps = find_gaps(typed([long])[0])
    assert gaps.outages == [] and [s.length_s for s in gaps.stalls] == [3.0]
    assert "2 lock-conflict errors" in gaps.stalls[0].describe_stall()
