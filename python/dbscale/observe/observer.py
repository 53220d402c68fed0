"""Watches one run from a Python thread while the native core measures: resource snapshots once a
second, the server's sessions a few times a second and its statistics once a second through one
`_core.Session`. At the end it keeps what fell inside the measured window and builds the run
record's `observe` section (docs/observe.md), verdict included.

The measured window is found from the run itself: the first per-second interval the runner polls
says when measuring began (its `t_s` before now), and the result's `duration_s` how long it
lasted. Setup (connecting, pgbench's vacuum) and teardown stay out of the numbers.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dbscale.core.config import RunConfig
from dbscale.core.result import Interval, RunResult
from dbscale.modes import Dialect
from dbscale.observe.cgroup import CgroupCpu, cpu_cgroup
from dbscale.observe.cluster import ClusterSampler
from dbscale.observe.host_facts import HostFacts
from dbscale.observe.procfs import ProcFs
from dbscale.observe.resources import CLK_TCK, ResourceSampler, ResourceSnapshot, Row, resource_row
from dbscale.observe.retention import CompactRows, StatsTrail, WaitTrail
from dbscale.observe.section import ObservedServer, ObserveSection, Overhead
from dbscale.observe.server_process import allowed_cpus, find_listener, postmaster_of_backend
from dbscale.observe.server_stats import (
    MYSQL_GAUGES,
    counter_deltas,
    gauge_means,
    ps_wait_deltas,
)
from dbscale.observe.session import ObserverSession, ServerIdentity, one_line
from dbscale.observe.session_gaps import SessionGap, mark_gaps
from dbscale.observe.statement_window import StatementWindow
from dbscale.observe.statements import ClientSide
from dbscale.observe.tables import column_table
from dbscale.observe.verdict import client_saturation, judge
from dbscale.targets.url import dialect_of, endpoint_of

CLIENT_WARNING = (
    "warning: the client (load generator) is a bottleneck ({evidence}); this run measures "
    "dbscale, not the database"
)

# How long closing the observer waits for its sampling thread (each of its waits on a server is
# bounded by OBSERVER_SESSION_TIMEOUT_S, so it ends soon after anyway).
THREAD_STOP_S = 10.0
RECONNECT_MAX_S = 30.0  # the longest wait between tries of a lost session
SLOW_TRY_S = 0.5  # a try that took this long waited for a silent server: back off


@dataclass(frozen=True)
class ObserveOptions:
    resource_interval_s: float = 1.0
    wait_interval_s: float = 0.15
    # Local load-generator worker processes of a scaled-out run: their engine threads count as
    # dbscale's, not as other processes'.
    client_pids: tuple[int, ...] = ()
    statements: bool = True  # the server's statement figures over the window (statements.py)
    explain: bool = False  # ... and the top statements' plans, after the window


@dataclass
class _Collected:
    """What the sampling thread gathers; read by `finish` after the thread has stopped."""

    rows: CompactRows = field(default_factory=CompactRows)
    waits: WaitTrail = field(default_factory=WaitTrail)
    stats: StatsTrail = field(default_factory=lambda: StatsTrail(MYSQL_GAUGES))
    ps_waits: list[dict[str, tuple[int, float]]] = field(default_factory=list)
    snapshot_s: list[float] = field(default_factory=list)
    session_ticks: list[tuple[float, int]] = field(default_factory=list)  # our own backend's CPU
    notes: list[str] = field(default_factory=list)
    gaps: list[SessionGap] = field(default_factory=list)  # the session lost, then back


class RunObserver:
    """One run's observer: `start()` before the run, `intervals()` as they are polled,
    `finish(native_result)` after it; `close()` always (idempotent)."""

    def __init__(
        self,
        config: RunConfig,
        *,
        host: HostFacts | None = None,
        options: ObserveOptions | None = None,
        proc: ProcFs | None = None,
        server_url: str | None = None,
    ) -> None:
        # A run through a local target's pooler observes the server behind it (`server_url`),
        # and counts the pooler's CPU as the server's.
        self.pooler_url = config.target.url if server_url is not None else None
        if server_url is not None:
            target = config.target.model_copy(update={"url": server_url, "more_urls": []})
            config = config.model_copy(update={"target": target})
        self.config = config
        self.host = host or HostFacts()
        self.options = options or ObserveOptions()
        self.proc = proc or ProcFs()
        self.dialect = dialect_of(config.target.url)
        self.session: ObserverSession | None = None
        self.identity: ServerIdentity | None = None
        self.server_pid: int | None = None
        self.server_vcpus: int | None = None
        self.pooler_pid: int | None = None
        self.cgroup: CgroupCpu | None = cpu_cgroup(self.proc)
        self._data = _Collected()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._measured_start: float | None = None
        self.cluster: ClusterSampler | None = None  # a target of several nodes
        self._live_notes: list[str] = []
        self._warned = False
        self._abandoned = False  # the sampling thread outlived close(): its sessions are its own
        self._next_reconnect = 0.0  # a lost session is tried again from then
        self._reconnect_every = 1.0
        self.statements: StatementWindow | None = None
        self._refused: set[str] = set()  # samplers the server refused (privileges)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        try:
            self.session = ObserverSession(self.config, self.dialect)
            self.identity = self.session.identity
            if self.options.statements:
                self.statements = StatementWindow(
                    self.dialect,
                    self.identity.version_num,
                    self.identity.performance_schema,
                    self.identity.performance_schema_denied,
                    explain=self.options.explain,
                )
        except Exception as exc:  # the run goes on; the record says what is missing
            self._data.notes.append(f"no server statistics: {one_line(exc)}")
        try:
            self.server_pid = self._find_server()
            if self.server_pid is not None:  # read now: a server restarted mid-run is another
                self.server_vcpus = allowed_cpus(self.proc, self.server_pid)
            if self.pooler_url is not None:
                self.pooler_pid = find_listener(self.proc, endpoint_of(self.pooler_url))
        except (OSError, ValueError) as exc:
            self._data.notes.append(f"local server not looked for: {one_line(exc)}")
        if self.config.target.more_urls:
            self.cluster = ClusterSampler(self.config, self.dialect, self.proc)
        # Not a daemon: at exit the interpreter waits for it (its every wait on a server is
        # bounded), rather than end it inside a native call.
        self._thread = threading.Thread(target=self._run, name="dbscale-observe", daemon=False)
        self._thread.start()

    def open_statement_window(self) -> None:
        """The first snapshot of the statement figures: called with the run's clients connected
        and waiting, right before its measured window (or its ramp) begins."""
        if self.statements is not None:
            self.statements.open(self.session)

    def intervals(self, intervals: Sequence[Interval]) -> None:
        """Called with each poll's new intervals; the first one dates the measured start."""
        if self._measured_start is None and intervals:
            self._measured_start = time.monotonic() - intervals[0].t_s
            self._data.stats.start_at(self._measured_start)  # from now on, keep only what
            self._data.waits.start_at(self._measured_start)  # the record needs

    def take_notes(self) -> list[str]:
        """Warnings for the live display, each returned once."""
        notes, self._live_notes = self._live_notes, []
        return notes

    def close(self) -> None:
        """Stops sampling. A sampling thread still waiting on a server that stopped answering
        is left to finish by itself (its waits are bounded); its sessions are its own until
        then, and the record says what was left out."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=THREAD_STOP_S)
            if self._thread.is_alive():
                self._abandoned = True
                self._data.notes.append(
                    f"the observer's sampling did not stop within {THREAD_STOP_S:g} s (a server "
                    "that stopped answering?): its last samples are left out"
                )
            self._thread = None
        if self.session is not None and not self._abandoned:
            self.session.close()
            self.session = None

    def finish(self, native: RunResult) -> ObserveSection:
        """Stops sampling and builds the record's `observe` section."""
        finished = time.monotonic()
        self.close()
        duration = native.duration_s
        start = self._measured_start if self._measured_start is not None else finished - duration
        end = min(start + duration, finished) if duration > 0 else finished
        return self._section(native, start, end)

    # -- discovery -----------------------------------------------------------------------------

    def _find_server(self) -> int | None:
        endpoint = endpoint_of(self.config.target.url)
        pid = find_listener(self.proc, endpoint)
        if pid is None and self.session is not None and self.session.identity.session_pid:
            pid = postmaster_of_backend(self.proc, endpoint, self.session.identity.session_pid)
        return pid

    # -- the sampling thread -------------------------------------------------------------------

    def _run(self) -> None:
        """The thread: a failure stops sampling and is noted; it never reaches the run."""
        try:
            self._loop()
        except Exception as exc:
            self._data.notes.append(f"sampling stopped: {type(exc).__name__}: {exc}")

    def _loop(self) -> None:
        sampler = ResourceSampler(
            self.proc,
            extra_pids=self.options.client_pids,
            observer_tid=threading.get_native_id(),
            server_pid=self.server_pid,
            pooler_pid=self.pooler_pid,
            more_server_pids=tuple(
                pid
                for pid in (self.cluster.server_pids if self.cluster else [])
                if pid != self.server_pid
            ),
            cgroup=self.cgroup,
        )
        prev = self._snapshot(sampler)
        self._sample_stats(prev.mono_s)
        next_row = prev.mono_s + self.options.resource_interval_s
        next_wait = time.monotonic()
        while not self._stop.wait(max(min(next_row, next_wait) - time.monotonic(), 0.0)):
            now = time.monotonic()
            if now >= next_wait:
                self._sample_waits(now)
                next_wait = max(next_wait + self.options.wait_interval_s, now)
            if now >= next_row:
                prev = self._tick(sampler, prev)
                next_row = max(next_row + self.options.resource_interval_s, now)
        self._tick(sampler, prev)
        self._sample_stats(time.monotonic(), final=True)
        if self.statements is not None and self.session is not None:
            self.statements.close(self.session)

    def _snapshot(self, sampler: ResourceSampler) -> ResourceSnapshot:
        begun = time.perf_counter()
        snap = sampler.snapshot()
        self._data.snapshot_s.append(time.perf_counter() - begun)
        return snap

    def _tick(self, sampler: ResourceSampler, prev: ResourceSnapshot) -> ResourceSnapshot:
        cur = self._snapshot(sampler)
        row = resource_row(prev, cur)
        if row:
            row["interval_s"] = cur.mono_s - prev.mono_s
            self._data.rows.append(cur.mono_s, row)
            self._reconnect(cur.mono_s)
            self._sample_stats(cur.mono_s)
            self._sample_session_cpu(cur.mono_s)
            if self.cluster is not None:
                self.cluster.sample(cur.mono_s)
            self._check_client()
        return cur

    def _sample_waits(self, now: float) -> None:
        if self.session is None or "waits" in self._refused:
            return
        try:
            self._data.waits.add(now, self.session.waits())
        except Exception as exc:
            self._lose_session("wait sampling", exc, "waits")

    def _sample_stats(self, now: float, *, final: bool = False) -> None:
        if self.session is None or "stats" in self._refused:
            return
        try:
            self._data.stats.add((now, self.session.stats(), self.session.queries))
            if final or self._data.stats.first():
                ps = self.session.ps_waits()
                if ps is not None:
                    self._data.ps_waits.append(ps)
        except Exception as exc:
            self._lose_session("server statistics", exc, "stats")

    def _sample_session_cpu(self, now: float) -> None:
        """The observer's own PostgreSQL backend, when the server is local: its CPU is what our
        queries cost the server."""
        pid = self.identity.session_pid if self.identity is not None else None
        if pid is None or self.server_pid is None:
            return
        stat = self.proc.pid_stat(pid)
        if stat is not None:
            self._data.session_ticks.append((now, stat.utime + stat.stime))

    def _lose_session(self, what: str, exc: Exception, sampler: str) -> None:
        """A failed query: the session is closed and tried again later, unless the server
        refused the query itself (a privilege the user lacks): then only that sampling stops,
        and the session goes on serving the rest (the statement snapshots)."""
        self._data.notes.append(f"{what} stopped: {one_line(exc)}")
        if _refused(exc):
            self._refused.add(sampler)
            return
        if self.session is not None:
            self.session.close()
            self.session = None
            self._data.gaps.append(SessionGap(time.monotonic(), f"{what}: {one_line(exc)}"))

    def _reconnect(self, now: float) -> None:
        """While the session is lost: a new one, tried every second while tries are refused at
        once (a restarting server), and after 2, 4, ... up to 30 s between tries once a try
        costs its time limit (a server that does not answer); once back, statistics start a new
        segment (the server's counters may have been reset by a restart). Never once sampling
        is stopping."""
        gaps = self._data.gaps
        if self.session is not None or not gaps or gaps[-1].back_s is not None:
            return
        if self._stop.is_set() or now < self._next_reconnect:
            return
        tried = time.monotonic()
        try:
            self.session = ObserverSession(self.config, self.dialect)
        except Exception:  # still down: try again later
            if time.monotonic() - tried >= SLOW_TRY_S:
                self._reconnect_every = min(self._reconnect_every * 2, RECONNECT_MAX_S)
            self._next_reconnect = time.monotonic() + self._reconnect_every
            return
        self._reconnect_every = 1.0
        self.identity = self.session.identity
        gaps[-1].back_s = now
        self._data.stats.new_segment()
        self._data.notes.append(
            f"the observer's session reconnected after {now - gaps[-1].lost_s:.1f} s"
        )

    def _check_client(self) -> None:
        if self._warned:
            return
        recent = self._data.rows.last(3)
        evidence = (
            client_saturation(recent, self._client_capacity(recent)) if len(recent) == 3 else None
        )
        if evidence:
            self._warned = True
            self._live_notes.append(CLIENT_WARNING.format(evidence=evidence))

    def _client_capacity(self, rows: Sequence[Row]) -> float:
        threads = max((r.get("client_threads", 0.0) for r in rows), default=0.0)
        limits = [threads or float(self.config.threads or 1), float(len(os.sched_getaffinity(0)))]
        if self.cgroup is not None and self.cgroup.quota_cores is not None:
            limits.append(self.cgroup.quota_cores)
        return min(limits)

    # -- the record ----------------------------------------------------------------------------

    def _section(self, native: RunResult, start: float, end: float) -> ObserveSection:
        interval = self.options.resource_interval_s
        rows = [
            (t, r) for t, r in self._data.rows if start + interval / 2 <= t <= end + interval / 2
        ]
        table = column_table([(t - start, r) for t, r in rows], interval)
        waits = self._data.waits.histogram(start, end)
        server = self._server_section(start, end)
        cluster = None
        if self.cluster is not None:
            cluster = self.cluster.finish(time.monotonic(), sample=not self._abandoned)
        verdict = judge(
            native,
            table.mean,
            waits if waits.samples else None,
            rows=len(rows),
            server_local=self.server_pid is not None,
            server_vcpus=server.vcpus,
            client_capacity_cores=self._client_capacity([r for _, r in rows]),
            host_cpus=self.host.logical_cpus or os.cpu_count() or 1,
            net_speed_mbps=self.host.net_speed_mbps,
            cluster=cluster,
        )
        section = ObserveSection(
            version=1,
            host=self.host.summary(),
            window_s=round(end - start, 3),
            resources=table,
            server=server,
            waits=waits.to_record(self.options.wait_interval_s * 1000.0) if waits.samples else None,
            overhead=self._overhead(table.mean, start, end),
            limited_by=verdict,
            cluster=cluster,
        )
        if self.statements is not None:
            statements = self.statements.record(start, client_side(native))
            if statements is not None:
                section = section.model_copy(update={"statements": statements})
        section = mark_gaps(section, [g for g in self._data.gaps if g.lost_s <= end], start, end)
        if self._data.notes:
            section = section.model_copy(update={"notes": list(self._data.notes)})
        return section

    def _server_section(self, start: float, end: float) -> ObservedServer:
        server = ObservedServer(
            dialect=self.dialect, local=self.server_pid is not None, pid=self.server_pid
        )
        if self.server_pid is not None:
            server = server.model_copy(update={"vcpus": self.server_vcpus})
        if self.identity is not None:
            server = server.model_copy(
                update={"version": self.identity.version, "settings": self.identity.settings}
            )
        segments = self._data.stats.segments()
        if segments:
            deltas: dict[str, float] = {}
            window = 0.0
            for segment in segments:  # counters differenced within a server's life, then summed
                before = [s for s in segment if s[0] <= start + 0.25] or segment[:1]
                first, last = before[-1], segment[-1]
                for name, value in counter_deltas(first[1], last[1], MYSQL_GAUGES).items():
                    deltas[name] = deltas.get(name, 0) + value
                own_queries = last[2] - first[2]
                if "database.xact_commit" in deltas:  # our own queries are transactions too
                    deltas["database.xact_commit"] = max(
                        deltas["database.xact_commit"] - own_queries, 0
                    )
                window += last[0] - first[0]
            if self.dialect is Dialect.MYSQL:
                inside = self._data.stats.gauges(start, end)
                deltas.update(gauge_means(inside, MYSQL_GAUGES))
            server = server.model_copy(update={"stats_window_s": round(window, 3), "stats": deltas})
        if len(self._data.ps_waits) >= 2:
            waits = ps_wait_deltas(self._data.ps_waits[0], self._data.ps_waits[-1])
            server = server.model_copy(update={"performance_schema_waits": waits})
        return server

    def _overhead(self, means: Mapping[str, float], start: float, end: float) -> Overhead:
        snaps = self._data.snapshot_s
        window = max(end - start, 1e-9)
        queries = self._data.waits.count(start, end) + self._data.stats.count(start, end)
        ticks = [(t, n) for t, n in self._data.session_ticks if start <= t <= end + 1.0]
        server_cores = None
        if len(ticks) >= 2 and ticks[-1][0] > ticks[0][0]:
            elapsed = ticks[-1][0] - ticks[0][0]
            server_cores = round((ticks[-1][1] - ticks[0][1]) / CLK_TCK / elapsed, 4)
        return Overhead(
            observer_cpu_cores=round(means.get("observer_cpu_cores", 0.0), 4),
            server_session_cpu_cores=server_cores,
            snapshot_ms_mean=round(1000 * sum(snaps) / len(snaps), 2) if snaps else None,
            queries_per_s=round(queries / window, 1),
        )


def client_side(native: RunResult) -> list[ClientSide]:
    """What the clients timed per statement: a script's commands (pgbench `-r`'s sums), then
    each statement with its histogram, which wins where both name one text."""
    timed = [
        ClientSide(command=c.command, count=c.count, mean_ms=c.mean_ms, max_ms=c.max_ms,
                   failures=c.failures)
        for c in native.commands
    ]  # fmt: skip
    timed += [
        ClientSide(command=s.sql, name=s.name, count=s.count, mean_ms=s.mean_ms,
                   max_ms=s.max_ms, p50_ms=s.p50_ms, p95_ms=s.p95_ms, p99_ms=s.p99_ms,
                   failures=s.failures)
        for s in native.statements
    ]  # fmt: skip
    return timed


def _refused(exc: BaseException) -> bool:
    """The server refused the query for want of a privilege (the session itself is fine)."""
    text = one_line(exc).lower()
    return "denied" in text or "permission" in text or "privilege" in text
