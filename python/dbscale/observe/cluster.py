"""Each node of a cluster target, observed: a session per node reads what the engine says of
the cluster once a second (Galera's certification failures, brute-force aborts, flow control
and state; PostgreSQL's replication from the primary: each standby's state, sync state and
lag), and a local node's process tree gives its CPU. The run's figures per node are the deltas
over the run (counters) or their worst (lag); a node that cannot be reached says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from dbscale.core import Session
from dbscale.core.config import RunConfig
from dbscale.errors import DbscaleError
from dbscale.modes import Dialect
from dbscale.observe.deadlines import OBSERVER_SESSION_TIMEOUT_S
from dbscale.observe.procfs import ProcFs
from dbscale.observe.resources import CLK_TCK
from dbscale.observe.server_process import ServerTimes, find_listener
from dbscale.observe.server_process import read_server_times as read_times
from dbscale.redaction import redact_url
from dbscale.targets.url import endpoint_of

GALERA_COUNTERS = (
    "wsrep_local_commits", "wsrep_local_cert_failures", "wsrep_local_bf_aborts",
    "wsrep_flow_control_paused_ns", "wsrep_flow_control_sent", "wsrep_flow_control_recv",
    "wsrep_replicated", "wsrep_received",
    # the node's own work, as any MySQL server counts it
    "com_commit", "com_rollback", "innodb_row_lock_waits", "innodb_deadlocks", "questions",
)  # fmt: skip
GALERA_STATES = ("wsrep_local_state_comment", "wsrep_cluster_size", "wsrep_cluster_status")
GALERA_SQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ({})".format(
    ", ".join(f"'{n}'" for n in (*GALERA_COUNTERS, *GALERA_STATES))
)
PG_ROLE_SQL = "SELECT pg_is_in_recovery()::int"
PG_NODE_SQL = """\
SELECT xact_commit, xact_rollback, conflicts, deadlocks, tup_inserted + tup_updated + tup_deleted
FROM pg_stat_database WHERE datname = current_database()"""
PG_NODE_COUNTERS = ("xact_commit", "xact_rollback", "conflicts", "deadlocks", "rows_written")
PG_REPLICATION_SQL = """\
SELECT application_name, state, sync_state,
       COALESCE(pg_wal_lsn_diff(sent_lsn, replay_lsn), 0)::bigint,
       COALESCE(EXTRACT(EPOCH FROM replay_lag), 0)::float8
FROM pg_stat_replication ORDER BY application_name"""


class StandbyState(BaseModel):
    """A standby as its primary saw it: last state, and the worst lag over the run."""

    model_config = ConfigDict(extra="allow")

    name: str
    state: str
    sync_state: str
    max_lag_bytes: int = 0
    max_replay_lag_s: float = 0.0


class NodeObservation(BaseModel):
    """One node over the run."""

    model_config = ConfigDict(extra="allow")

    node: str  # the URL without its password
    role: str | None = None  # primary, standby, synced, ...
    cpu_cores: float | None = None  # a local node's process tree
    counters: dict[str, float] = Field(default_factory=dict)  # deltas over the run
    standbys: list[StandbyState] = Field(default_factory=list)  # a primary's
    note: str | None = None  # why something is missing


class ClusterObservation(BaseModel):
    """The cluster over the run: each node, and the totals the verdict reads."""

    model_config = ConfigDict(extra="allow")

    engine: str  # galera | postgresql-replication | unknown
    nodes: list[NodeObservation]
    commits: float = 0.0
    cert_failures: float = 0.0
    bf_aborts: float = 0.0
    flow_control_paused_s: float = 0.0
    max_lag_bytes: int = 0
    max_replay_lag_s: float = 0.0

    @property
    def conflict_share(self) -> float:
        """Transactions aborted by certification or by a replicated write, per local commit."""
        return (self.cert_failures + self.bf_aborts) / max(self.commits, 1.0)


@dataclass
class _Node:
    url: str
    session: Session | None = None
    pid: int | None = None
    first: dict[str, float] = field(default_factory=dict)
    last: dict[str, float] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)
    standbys: dict[str, StandbyState] = field(default_factory=dict)
    role: str | None = None
    times: tuple[ServerTimes | None, ServerTimes | None] = (None, None)
    clock: tuple[float, float] = (0.0, 0.0)
    note: str | None = None


class ClusterSampler:
    """Samples every node of a several-node target; `sample()` once a second, `finish()`."""

    def __init__(self, config: RunConfig, dialect: Dialect, proc: ProcFs) -> None:
        self.dialect, self.proc = dialect, proc
        urls = [config.target.url, *config.target.more_urls]
        self.nodes = [_Node(url) for url in urls]
        for node in self.nodes:
            target = config.target.model_copy(update={"url": node.url, "more_urls": []})
            try:
                node.session = Session(
                    config.model_copy(update={"target": target}), OBSERVER_SESSION_TIMEOUT_S
                )
            except DbscaleError as exc:
                node.note = f"not reachable: {exc.message}"
            try:
                node.pid = find_listener(proc, endpoint_of(node.url))
            except (OSError, ValueError):
                node.pid = None

    @property
    def server_pids(self) -> list[int]:
        """The local nodes' server processes (their CPU is the database's)."""
        return [node.pid for node in self.nodes if node.pid is not None]

    def sample(self, now: float) -> None:
        for node in self.nodes:
            self._sample(node, now)

    def _sample(self, node: _Node, now: float) -> None:
        if node.session is None:
            return
        try:
            if self.dialect is Dialect.MYSQL:
                self._galera(node)
            else:
                self._postgres(node)
        except DbscaleError as exc:
            node.note = f"lost during the run: {exc.message}"
            node.session = None
        if node.pid is not None:
            times = read_times(self.proc, node.pid)
            if times is not None:
                first = node.times[0] or times
                node.times = (first, times)
                node.clock = (node.clock[0] or now, now)

    def _galera(self, node: _Node) -> None:
        assert node.session is not None
        values = {str(name).lower(): str(value) for name, value in node.session.query(GALERA_SQL)}
        numbers = {}
        for name in GALERA_COUNTERS:
            try:
                numbers[name] = float(values[name])
            except (KeyError, TypeError, ValueError):
                continue
        if not node.first:
            node.first = numbers
        node.last = numbers
        node.states = {n: str(values.get(n, "")) for n in GALERA_STATES if n in values}
        comment = node.states.get("wsrep_local_state_comment")
        node.role = comment.lower() if comment else "not galera"

    def _postgres(self, node: _Node) -> None:
        assert node.session is not None
        [[recovery]] = node.session.query(PG_ROLE_SQL)
        node.role = "standby" if str(recovery) == "1" else "primary"
        for row in node.session.query(PG_NODE_SQL):
            numbers = {
                name: float(value)
                for name, value in zip(PG_NODE_COUNTERS, row, strict=False)
                if value is not None
            }
            if not node.first:
                node.first = numbers
            node.last = numbers
        if node.role != "primary":
            return
        for name, state, sync, lag, replay in node.session.query(PG_REPLICATION_SQL):
            seen = node.standbys.get(str(name))
            node.standbys[str(name)] = StandbyState(
                name=str(name),
                state=str(state),
                sync_state=str(sync),
                max_lag_bytes=max(int(lag or 0), seen.max_lag_bytes if seen else 0),
                max_replay_lag_s=max(float(replay or 0.0), seen.max_replay_lag_s if seen else 0.0),
            )

    def finish(self, now: float, *, sample: bool = True) -> ClusterObservation:
        """The run's figures per node (the last sample taken now, unless the sampling thread
        still holds the sessions: then the samples so far), the sessions closed."""
        if sample:
            self.sample(now)
            for node in self.nodes:
                if node.session is not None:
                    node.session.close()
                    node.session = None
        observed = [self._observation(node) for node in self.nodes]
        engine = (
            "galera"
            if any("wsrep_local_commits" in n.first for n in self.nodes)
            else ("postgresql-replication" if self.dialect is Dialect.POSTGRESQL else "unknown")
        )
        return ClusterObservation(
            engine=engine,
            nodes=observed,
            commits=_total(observed, "wsrep_local_commits"),
            cert_failures=_total(observed, "wsrep_local_cert_failures"),
            bf_aborts=_total(observed, "wsrep_local_bf_aborts"),
            flow_control_paused_s=_total(observed, "wsrep_flow_control_paused_ns") / 1e9,
            max_lag_bytes=max((s.max_lag_bytes for n in observed for s in n.standbys), default=0),
            max_replay_lag_s=max(
                (s.max_replay_lag_s for n in observed for s in n.standbys), default=0.0
            ),
        )

    def _observation(self, node: _Node) -> NodeObservation:
        counters = {
            name: end - node.first[name]
            for name, end in node.last.items()
            if name in node.first and end >= node.first[name]
        }
        cpu = None
        first, last = node.times
        if first is not None and last is not None and node.clock[1] > node.clock[0]:
            ticks = (last.user_ticks + last.system_ticks) - (first.user_ticks + first.system_ticks)
            # A node killed and restarted is another process tree: its CPU is not known.
            cpu = (
                round(ticks / CLK_TCK / (node.clock[1] - node.clock[0]), 3) if ticks >= 0 else None
            )
        return NodeObservation(
            node=redact_url(node.url),
            role=node.role,
            cpu_cores=cpu,
            counters=counters,
            standbys=list(node.standbys.values()),
            note=node.note,
        )


def _total(nodes: Sequence[NodeObservation], name: str) -> float:
    return sum(n.counters.get(name, 0.0) for n in nodes)
