"""Per-second resource use: one `ResourceSnapshot` of counters per tick, and the arithmetic that
turns two of them into one row of rates.

Counted on the client: the engine's worker threads (`dbscale-worker-N`) apart from the rest of
the process, so the load generator's CPU is not mixed with the sampler's; their run-queue wait
(schedstat), which shows a client starved of CPU; the cgroup's throttled time. On the host: CPU
per state (/proc/stat), context switches, network per interface, CPU frequency. On a local
server: CPU, run-queue wait and I/O of its process tree.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from dbscale.observe.cgroup import CgroupCpu, ThrottleCounters, read_throttling
from dbscale.observe.procfs import (
    CPU_STATES,
    HostCpuTimes,
    NetCounters,
    ProcFs,
    parse_cpuinfo_mhz,
)
from dbscale.observe.server_process import ServerTimes, read_server_times

# Thread names are cut to 15 bytes: "dbscale-worker-0" reads "dbscale-worker-".
ENGINE_THREAD_PREFIX = "dbscale-worker"[:13]
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
CPUFREQ_GLOB = "cpu[0-9]*/cpufreq/scaling_cur_freq"
Row = dict[str, float]


@dataclass(frozen=True)
class ThreadTimes:
    user_ticks: int
    system_ticks: int
    run_ns: int
    wait_ns: int


@dataclass(frozen=True)
class ResourceSnapshot:
    mono_s: float
    host: HostCpuTimes | None
    engine: dict[int, ThreadTimes]
    observer: ThreadTimes | None
    process_ticks: int | None
    net: dict[str, NetCounters]
    server: ServerTimes | None
    throttle: ThrottleCounters | None
    mhz: list[float] = field(default_factory=list)


class ResourceSampler:
    """Takes snapshots of one client process (and optionally a local server's process tree)."""

    def __init__(
        self,
        proc: ProcFs,
        *,
        pid: int | None = None,
        extra_pids: tuple[int, ...] = (),
        observer_tid: int | None = None,
        server_pid: int | None = None,
        pooler_pid: int | None = None,
        more_server_pids: tuple[int, ...] = (),
        cgroup: CgroupCpu | None = None,
        cpu_sysfs: Path = Path("/sys/devices/system/cpu"),
    ) -> None:
        self.proc = proc
        self.pid = pid or os.getpid()
        self.extra_pids = extra_pids  # local worker processes whose engine threads are ours
        self.observer_tid = observer_tid
        self.server_pid = server_pid
        self.pooler_pid = pooler_pid  # its CPU counts as the server's
        self.more_server_pids = more_server_pids  # a local cluster's other nodes
        self.cgroup = cgroup
        self._freq_files = sorted(cpu_sysfs.glob(CPUFREQ_GLOB))

    def snapshot(self) -> ResourceSnapshot:
        engine: dict[int, ThreadTimes] = {}
        observer = None
        for pid in (self.pid, *self.extra_pids):
            for tid in self.proc.thread_ids(pid):
                is_observer = pid == self.pid and tid == self.observer_tid
                if not is_observer:
                    comm = self.proc.read(f"{pid}/task/{tid}/comm") or ""
                    if not comm.startswith(ENGINE_THREAD_PREFIX):
                        continue
                times = self._thread_times(pid, tid)
                if times is None:
                    continue
                if is_observer:
                    observer = times
                else:
                    engine[tid] = times
        stats = [self.proc.pid_stat(pid) for pid in (self.pid, *self.extra_pids)]
        ticks = [p.utime + p.stime for p in stats if p is not None]
        process = stats[0]
        return ResourceSnapshot(
            mono_s=time.monotonic(),
            host=self.proc.host_cpu(),
            engine=engine,
            observer=observer,
            process_ticks=None if process is None else sum(ticks),
            net=self.proc.net_dev(),
            server=None
            if self.server_pid is None
            else read_server_times(
                self.proc, self.server_pid, self.pooler_pid, self.more_server_pids
            ),
            throttle=None if self.cgroup is None else read_throttling(self.cgroup),
            mhz=self._mhz(),
        )

    def _thread_times(self, pid: int, tid: int) -> ThreadTimes | None:
        stat = self.proc.pid_stat(pid, tid)
        sched = self.proc.schedstat(pid, tid)
        if stat is None:
            return None
        run, wait = (sched.run_ns, sched.wait_ns) if sched else (0, 0)
        return ThreadTimes(stat.utime, stat.stime, run, wait)

    def _mhz(self) -> list[float]:
        if self._freq_files:
            values: list[float] = []
            for path in self._freq_files:
                try:
                    values.append(int(path.read_text()) / 1000.0)
                except (OSError, ValueError):
                    continue
            return values
        return parse_cpuinfo_mhz(self.proc.read("cpuinfo") or "")


def resource_row(prev: ResourceSnapshot, cur: ResourceSnapshot, clk_tck: int = CLK_TCK) -> Row:
    """Rates between two snapshots: CPU in cores (CPU-seconds per second) for processes, percent
    of all host CPUs for host states, counts and bytes per second."""
    dt = cur.mono_s - prev.mono_s
    if dt <= 0:
        return {}
    row: Row = {}
    row.update(_client_rates(prev, cur, dt, clk_tck))
    row.update(_host_rates(prev.host, cur.host, dt))
    if cur.mhz:
        row["cpu_mhz_mean"] = sum(cur.mhz) / len(cur.mhz)
        row["cpu_mhz_min"] = min(cur.mhz)
        row["cpu_mhz_max"] = max(cur.mhz)
    if prev.server is not None and cur.server is not None:
        row.update(_server_rates(prev.server, cur.server, dt, clk_tck))
    for name, now in cur.net.items():
        before = prev.net.get(name)
        if before is None:
            continue
        row[f"net.{name}.rx_bytes_per_s"] = _rate(now.rx_bytes - before.rx_bytes, dt)
        row[f"net.{name}.tx_bytes_per_s"] = _rate(now.tx_bytes - before.tx_bytes, dt)
        row[f"net.{name}.rx_packets_per_s"] = _rate(now.rx_packets - before.rx_packets, dt)
        row[f"net.{name}.tx_packets_per_s"] = _rate(now.tx_packets - before.tx_packets, dt)
    return row


def _rate(delta: float, dt: float) -> float:
    return max(delta, 0) / dt


def _client_rates(prev: ResourceSnapshot, cur: ResourceSnapshot, dt: float, clk_tck: int) -> Row:
    user = system = run = wait = 0.0
    busiest = 0.0
    for tid, now in cur.engine.items():
        # A thread first seen now started after the previous snapshot: all of it is new.
        before = prev.engine.get(tid, ThreadTimes(0, 0, 0, 0))
        user += now.user_ticks - before.user_ticks
        system += now.system_ticks - before.system_ticks
        thread_run = max(now.run_ns - before.run_ns, 0)
        thread_wait = max(now.wait_ns - before.wait_ns, 0)
        run += thread_run
        wait += thread_wait
        busiest = max(busiest, (thread_run + thread_wait) / 1e9 / dt)
    row: Row = {
        "client_threads": float(len(cur.engine)),
        "client_cpu_cores": run / 1e9 / dt,
        "client_cpu_user_cores": _rate(user, dt) / clk_tck,
        "client_cpu_system_cores": _rate(system, dt) / clk_tck,
        "client_runq_cores": wait / 1e9 / dt,
        "client_thread_busy_max_pct": 100.0 * min(busiest, 1.0),
    }
    if prev.process_ticks is not None and cur.process_ticks is not None:
        row["process_cpu_cores"] = _rate(cur.process_ticks - prev.process_ticks, dt) / clk_tck
    if prev.observer is not None and cur.observer is not None:
        row["observer_cpu_cores"] = _rate(cur.observer.run_ns - prev.observer.run_ns, dt) / 1e9
    if prev.throttle is not None and cur.throttle is not None:
        throttled = cur.throttle.throttled_s - prev.throttle.throttled_s
        row["client_throttled_pct"] = 100.0 * min(_rate(throttled, dt), 1.0)
        periods = cur.throttle.periods - prev.throttle.periods
        if periods > 0:
            hit = cur.throttle.throttled_periods - prev.throttle.throttled_periods
            row["client_throttled_periods_pct"] = 100.0 * max(hit, 0) / periods
    return row


def _host_rates(prev: HostCpuTimes | None, cur: HostCpuTimes | None, dt: float) -> Row:
    if prev is None or cur is None:
        return {}
    deltas = {s: max(cur.total.get(s, 0) - prev.total.get(s, 0), 0) for s in CPU_STATES}
    total = sum(deltas.values())
    row: Row = {}
    if total > 0:
        for state in CPU_STATES:
            row[f"host_{state}_pct"] = 100.0 * deltas[state] / total
    busiest = 0.0
    for before, now in zip(prev.per_cpu, cur.per_cpu, strict=False):
        d = {s: max(now.get(s, 0) - before.get(s, 0), 0) for s in CPU_STATES}
        cpu_total = sum(d.values())
        if cpu_total > 0:
            busiest = max(busiest, 100.0 * (cpu_total - d["idle"] - d["iowait"]) / cpu_total)
    row["host_busiest_cpu_pct"] = busiest
    row["host_ctxt_per_s"] = _rate(cur.ctxt - prev.ctxt, dt)
    row["host_procs_running"] = float(cur.procs_running)
    return row


def _server_rates(prev: ServerTimes, cur: ServerTimes, dt: float, clk_tck: int) -> Row:
    run = wait = 0
    for tid, (now_run, now_wait) in cur.sched.items():
        before = prev.sched.get(tid, (0, 0))  # first seen: born since the last snapshot
        run += max(now_run - before[0], 0)
        wait += max(now_wait - before[1], 0)
    row: Row = {
        "server_cpu_user_cores": _rate(cur.user_ticks - prev.user_ticks, dt) / clk_tck,
        "server_cpu_system_cores": _rate(cur.system_ticks - prev.system_ticks, dt) / clk_tck,
        "server_runq_cores": wait / 1e9 / dt,
        "server_processes": float(cur.processes),
    }
    if cur.io_readable and prev.io_readable:
        row["server_read_bytes_per_s"] = _rate(cur.read_bytes - prev.read_bytes, dt)
        row["server_write_bytes_per_s"] = _rate(cur.write_bytes - prev.write_bytes, dt)
    return row
