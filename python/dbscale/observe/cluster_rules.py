"""The verdict's cluster rules (docs/observe.md lists them with their thresholds): a Galera
cluster whose transactions die in certification or to replicated writes, or that spends its
time paused by flow control; a PostgreSQL primary whose commits wait for the synchronous
standby. Each reads the run's `Evidence` (its cluster observation and waits) and returns a
`Finding`, or None. They are tried before the single-server rules, which would call the same
waits lock contention or WAL.
"""

from __future__ import annotations

from dbscale.observe.evidence import Evidence, Finding

CONFLICT_SHARE = 0.05  # certification failures + brute-force aborts per local commit
FLOW_CONTROL_SHARE = 0.2  # of the run's time, on the node paused the longest
SYNC_WAIT_SHARE = 0.3  # of active sessions' samples waiting for the synchronous standby
SYNC_REP_EVENT = "IPC:SyncRep"
CERTIFICATION_STATE = "Waiting for certification"


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def rule_certification(ev: Evidence) -> Finding | None:
    cluster = ev.cluster
    if cluster is None or cluster.engine != "galera" or cluster.commits <= 0:
        return None
    share = cluster.conflict_share
    if share < CONFLICT_SHARE:
        return None
    return Finding(
        "certification-conflicts",
        "certification conflicts between nodes",
        f"{cluster.cert_failures:.0f} certification failures and {cluster.bf_aborts:.0f} "
        f"brute-force aborts for {cluster.commits:.0f} local commits ({_pct(share)}): the same "
        "rows were written through different nodes; write each row through one node (TPC-C: "
        "--routing affinity keeps a warehouse's terminals on its node)",
        {
            "cert_failures": cluster.cert_failures,
            "bf_aborts": cluster.bf_aborts,
            "commits": cluster.commits,
            "conflict_pct": round(100 * share, 2),
        },
    )


def rule_flow_control(ev: Evidence) -> Finding | None:
    cluster = ev.cluster
    duration = ev.native.duration_s or 0.0
    if cluster is None or cluster.engine != "galera" or duration <= 0:
        return None
    paused = max(
        (n.counters.get("wsrep_flow_control_paused_ns", 0.0) / 1e9 for n in cluster.nodes),
        default=0.0,
    )
    share = paused / duration
    if share < FLOW_CONTROL_SHARE:
        return None
    senders = [
        f"{n.node} sent {n.counters.get('wsrep_flow_control_sent', 0):.0f}"
        for n in cluster.nodes
        if n.counters.get("wsrep_flow_control_sent", 0) > 0
    ]
    return Finding(
        "flow-control",
        "Galera flow control",
        f"replication was paused {paused:.1f} s of the {duration:.1f} s run ({_pct(share)}): a "
        "node applying write-sets slower than the others write them holds the whole cluster back"
        + (f" ({'; '.join(senders)} pause messages)" if senders else ""),
        {"flow_control_paused_s": round(paused, 3), "flow_control_pct": round(100 * share, 1)},
    )


def rule_sync_standby(ev: Evidence) -> Finding | None:
    waits = ev.waits
    if waits is None or not waits.events:
        return None
    active = sum(waits.events.values())
    waiting = sum(n for event, n in waits.events.items() if event == SYNC_REP_EVENT)
    share = waiting / max(active, 1)
    if share < SYNC_WAIT_SHARE:
        return None
    lag = ""
    cluster = ev.cluster
    if cluster is not None and cluster.max_replay_lag_s > 0:
        lag = f"; the standbys' replay lag reached {cluster.max_replay_lag_s * 1000:.0f} ms"
    return Finding(
        "sync-standby",
        "waiting for the synchronous standby",
        f"{_pct(share)} of active sessions waited for a synchronous standby to confirm their "
        f"commit (IPC:SyncRep){lag}",
        {"sync_wait_pct": round(100 * share, 1)},
    )


CLUSTER_RULES = (rule_certification, rule_flow_control, rule_sync_standby)
