"""The verdict's rules, in the order they are tried (docs/observe.md lists them with their
thresholds). Each reads the `Evidence` and returns a `Finding` with its numbers, or None.
"""

from __future__ import annotations

import math

from dbscale.core.result import LatencyFigures
from dbscale.observe.cluster_rules import CLUSTER_RULES
from dbscale.observe.evidence import Evidence, Finding
from dbscale.observe.waits import WaitHistogram

# Thresholds; docs/observe.md explains each.
RATE_MET = 0.9  # tps at least this share of the target rate ...
RATE_POISSON_Z = 3.3  # ... or within this many standard deviations of the arrivals expected
RATE_UNSTARTED_MAX = 0.01  # at most this share of transactions never started
RATE_LAG_P99_MAX_MS = 10.0  # or up to the latency p99: lag not dominating
CLIENT_THROTTLED_PCT = 10.0  # of the time
CLIENT_THROTTLED_PERIODS_PCT = 20.0  # of the quota's periods
CLIENT_SATURATED = 0.9  # engine CPU / the CPU the client may use
CLIENT_STARVED_BUSY_PCT = 90.0  # a worker thread runnable (on CPU or queued) this much
CLIENT_STARVED_QUEUED = 0.3  # ... and queued for a CPU this share of that time
CONNECT_SHARE = 0.3  # share of client time spent connecting
HOST_SATURATED_PCT = 90.0
LOCK_DOMINANT = 0.5  # of active backend-samples
LOCK_NOTABLE = 0.3
IO_DOMINANT = 0.4
SERVER_SATURATED = 0.9  # server CPU / the CPUs it may use
NETWORK_SATURATED = 0.8  # of link speed
CONCURRENCY_HOST_BUSY_PCT = 80.0  # below this the host has room to spare
CONCURRENCY_MATCH = 0.8  # tps within this factor of clients / mean latency
MIN_ROWS = 2
MIN_WAIT_SAMPLES = 10
# What the server's sessions waited on says what limited the run only when they were busy: this
# many active backend-samples at least, and this many sessions active on average. A paced run
# (TPC-C's keying and think times) leaves them idle, and a few samples of a lock say nothing.
MIN_ACTIVE_SAMPLES = 30
MIN_ACTIVE_SESSIONS = 0.2


def _busy_waits(ev: Evidence) -> WaitHistogram | None:
    """The run's wait samples when there are enough of busy sessions to judge by."""
    waits = ev.waits
    if waits is None or waits.samples < MIN_WAIT_SAMPLES:
        return None
    if waits.active < MIN_ACTIVE_SAMPLES or waits.active / waits.samples < MIN_ACTIVE_SESSIONS:
        return None
    return waits


def pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _figure(figures: LatencyFigures | None, name: str) -> float:
    value = figures.percentile(name) if figures is not None else None
    return value or 0.0


def _events(waits: WaitHistogram, n: int = 3) -> str:
    return ", ".join(f"{event} {pct(share)}" for event, share in waits.top_events(n))


def rule_target_rate(ev: Evidence) -> Finding | None:
    """Open model keeping up: throughput near the rate and the schedule not slipping. The core
    counts any start over 1 ms late, which a busy host does routinely, so lag is judged by p99."""
    rate = ev.native.rate_tps or 0.0
    if rate <= 0:
        return None
    tps = ev.native.tps
    done = ev.native.transactions + ev.native.failed
    # Arrivals are a Poisson process: a 3 s run at 200/s expects 600 +- 24.5 of them, so a
    # short run can fall under 90% of the rate by chance alone (once in about 150 runs).
    expected = rate * (ev.native.duration_s or 0.0)
    enough = min(RATE_MET * expected, expected - RATE_POISSON_Z * math.sqrt(expected))
    delivered = done >= enough if expected > 0 else tps >= RATE_MET * rate
    unstarted = ev.native.unstarted / max(done, 1)
    lag = _figure(ev.native.schedule_lag_ms, "p99")
    latency_p99 = _figure(ev.native.latency_ms, "p99")
    numbers = {"tps": round(tps, 1), "rate_tps": rate, "lag_p99_ms": round(lag, 2),
               "unstarted_pct": round(100 * unstarted, 2)}  # fmt: skip
    keeping_up = lag <= max(RATE_LAG_P99_MAX_MS, latency_p99)
    if delivered and unstarted <= RATE_UNSTARTED_MAX and keeping_up:
        return Finding(
            "target-rate",
            "the target rate (open model)",
            f"{tps:.1f} tps of {rate:g} wanted ({pct(tps / rate)}), schedule lag p99 "
            f"{lag:.2f} ms (latency p99 {latency_p99:.2f} ms), {pct(unstarted)} never started",
            numbers,
        )
    return None


def rule_client_cpu(ev: Evidence) -> Finding | None:
    """The client at its CPU limit: its cgroup throttled it, or its worker threads used
    (nearly) all the CPU they can. A quota covers the whole process, so the whole process's CPU
    is compared with it; worker threads are compared with their count and the CPUs allowed."""
    throttled = ev.mean("client_throttled_pct")
    periods = ev.mean("client_throttled_periods_pct")
    cpu, process = ev.mean("client_cpu_cores"), ev.process_cores
    capacity = ev.client_capacity_cores
    numbers = {"client_cpu_cores": round(cpu, 3), "client_process_cpu_cores": round(process, 3),
               "client_capacity_cores": round(capacity, 3),
               "client_throttled_pct": round(throttled, 1),
               "client_throttled_periods_pct": round(periods, 1)}  # fmt: skip
    if throttled >= CLIENT_THROTTLED_PCT or periods >= CLIENT_THROTTLED_PERIODS_PCT:
        return Finding(
            "client-cpu",
            "the load generator (client CPU quota)",
            f"the client's cgroup throttled it in {periods:.0f}% of its CPU periods "
            f"({throttled:.0f}% of the time); dbscale used {process:.2f} cores of a "
            f"{capacity:.2f}-core limit",
            numbers,
        )
    if capacity > 0 and cpu >= CLIENT_SATURATED * capacity:
        return Finding(
            "client-cpu",
            "the load generator (client CPU)",
            f"dbscale's workers used {cpu:.2f} cores of the {capacity:g} they can use "
            f"({pct(cpu / capacity)})",
            numbers,
        )
    return None


def rule_connection_rate(ev: Evidence) -> Finding | None:
    if ev.native.connect != "per-transaction":
        return None
    connect = ev.native.connect_ms
    count = connect.count if connect is not None else 0
    mean_ms = _figure(connect, "mean")
    clients = ev.native.clients or 1
    duration = ev.native.duration_s
    if count == 0 or duration <= 0:
        return None
    share = count * mean_ms / 1000.0 / (clients * duration)
    latency = _figure(ev.native.latency_ms, "mean")
    if share < CONNECT_SHARE:
        return None
    return Finding(
        "connection-rate",
        "the connection rate (a new connection per transaction)",
        f"{count / duration:.0f} connections/s, each {mean_ms:.2f} ms: clients spent "
        f"{pct(min(share, 1.0))} of their time connecting (transactions {latency:.2f} ms)",
        {
            "connects_per_s": round(count / duration, 1),
            "connect_mean_ms": round(mean_ms, 3),
            "connect_share_pct": round(100 * share, 1),
        },
    )


def rule_locks(ev: Evidence, threshold: float = LOCK_DOMINANT) -> Finding | None:
    waits = _busy_waits(ev)
    if waits is None:
        return None
    shares = waits.class_shares()
    locked = shares["lock"] + shares["lwlock"]
    if locked < threshold:
        return None
    kind = "lock" if shares["lock"] >= shares["lwlock"] else "latch (LWLock)"
    return Finding(
        "lock-contention",
        f"{kind} contention",
        f"{pct(locked)} of active sessions waited on locks ({_events(waits)}); "
        f"{waits.active / waits.samples:.1f} sessions active on average",
        {
            "lock_share_pct": round(100 * shares["lock"], 1),
            "lwlock_share_pct": round(100 * shares["lwlock"], 1),
        },
    )


def rule_io(ev: Evidence) -> Finding | None:
    waits = _busy_waits(ev)
    if waits is None:
        return None
    shares = waits.class_shares()
    numbers = {"wal_share_pct": round(100 * shares["wal"], 1),
               "io_share_pct": round(100 * shares["io"], 1),
               "host_iowait_pct": round(ev.mean("host_iowait_pct"), 1),
               "server_write_bytes_per_s": ev.means.get("server_write_bytes_per_s")}  # fmt: skip
    if shares["wal"] >= IO_DOMINANT:
        return Finding(
            "wal-flush",
            "WAL / commit flush (fsync)",
            f"{pct(shares['wal'])} of active sessions waited on WAL writes or flushes "
            f"({_events(waits)}); host iowait {ev.mean('host_iowait_pct'):.0f}%",
            numbers,
        )
    if shares["io"] >= IO_DOMINANT:
        return Finding(
            "io",
            "storage I/O",
            f"{pct(shares['io'])} of active sessions waited on I/O ({_events(waits)}); "
            f"host iowait {ev.mean('host_iowait_pct'):.0f}%",
            numbers,
        )
    return None


def rule_host_cpu(ev: Evidence) -> Finding | None:
    """The host's CPU saturated: whoever used most of it is the limit."""
    busy = ev.host_busy_pct
    if busy < HOST_SATURATED_PCT:
        return None
    cores = max(ev.host_busy_cores, 1e-9)
    parts = (
        f"host CPU {busy:.0f}% busy ({ev.host_cpus} CPUs): "
        + (
            f"server {ev.server_cores:.2f} cores ({pct(ev.server_cores / cores)}), "
            if ev.server_local
            else ""
        )
        + f"dbscale {ev.process_cores:.2f} ({pct(ev.process_cores / cores)}), "
        f"other processes {ev.other_cores:.2f} ({pct(ev.other_cores / cores)}), "
        f"irq/softirq/steal {ev.kernel_cores:.2f}"
    )
    numbers = {"host_busy_pct": round(busy, 1), "server_cpu_cores": round(ev.server_cores, 3),
               "client_process_cpu_cores": round(ev.process_cores, 3),
               "other_cpu_cores": round(ev.other_cores, 3)}  # fmt: skip
    # The biggest user of the busy CPU is the limit (ties go to the server, then the client).
    users = {
        "server-cpu": ev.server_cores if ev.server_local else -1.0,
        "client-cpu": ev.process_cores,
        "host-contention": ev.other_cores,
    }
    verdict = max(users, key=lambda name: users[name])
    if verdict == "server-cpu":
        return Finding("server-cpu", "server CPU", parts + _cpu_waits(ev), numbers)
    if verdict == "client-cpu":
        summary = "the load generator (host CPU shared, client largest)"
        return Finding("client-cpu", summary, parts, numbers)
    return Finding("host-contention", "other processes on the host", parts, numbers)


def _cpu_waits(ev: Evidence) -> str:
    """Server-side signs of CPU pressure: processes queued for a CPU, sessions on CPU."""
    text = ""
    if ev.server_local and "server_runq_cores" in ev.means:
        text += (
            f"; {ev.mean('server_runq_cores'):.1f} server processes waiting for a CPU on average"
        )
    if ev.waits is not None and ev.waits.active:
        text += f"; active sessions on CPU {pct(ev.waits.class_shares()['cpu'])}"
    return text


def rule_client_starved(ev: Evidence) -> Finding | None:
    busy = ev.mean("client_thread_busy_max_pct")
    cpu, queued = ev.mean("client_cpu_cores"), ev.mean("client_runq_cores")
    if busy < CLIENT_STARVED_BUSY_PCT or cpu + queued <= 0:
        return None
    share = queued / (cpu + queued)
    if share < CLIENT_STARVED_QUEUED:
        return None
    return Finding(
        "client-cpu",
        "the load generator (starved of CPU)",
        f"dbscale's busiest worker was runnable {busy:.0f}% of the time but waited for a CPU "
        f"{pct(share)} of it ({cpu:.2f} cores on CPU, {queued:.2f} queued); host CPU "
        f"{ev.host_busy_pct:.0f}% busy",
        {
            "client_thread_busy_max_pct": round(busy, 1),
            "client_runq_share_pct": round(100 * share, 1),
        },
    )


def rule_server_cpu(ev: Evidence) -> Finding | None:
    if not ev.server_local or not ev.server_vcpus:
        return None
    if ev.server_cores < SERVER_SATURATED * ev.server_vcpus:
        return None
    return Finding(
        "server-cpu",
        "server CPU",
        f"server processes used {ev.server_cores:.2f} of the {ev.server_vcpus} CPUs they may "
        f"run on" + _cpu_waits(ev),
        {"server_cpu_cores": round(ev.server_cores, 3), "server_vcpus": ev.server_vcpus},
    )


def rule_network(ev: Evidence) -> Finding | None:
    for name, speed in ev.net_speed_mbps.items():
        if speed <= 0:
            continue
        peak = max(ev.mean(f"net.{name}.rx_bytes_per_s"), ev.mean(f"net.{name}.tx_bytes_per_s"))
        used = peak * 8 / 1e6 / speed
        if used >= NETWORK_SATURATED:
            return Finding(
                "network",
                "the network",
                f"{name} carried {peak * 8 / 1e6:.0f} Mbit/s of its {speed:.0f} ({pct(used)})",
                {"interface": name, "mbit_per_s": round(peak * 8 / 1e6, 1), "speed_mbps": speed},
            )
    if ev.waits is not None and ev.waits.samples >= MIN_WAIT_SAMPLES:
        writes = sum(s for e, s in ev.waits.top_events(10) if e == "Client:ClientWrite")
        if writes >= LOCK_NOTABLE:
            return Finding(
                "network",
                "the network (server waiting to send results)",
                f"{pct(writes)} of active sessions waited in ClientWrite",
                {"client_write_share_pct": round(100 * writes, 1)},
            )
    return None


def rule_weak_locks(ev: Evidence) -> Finding | None:
    return rule_locks(ev, LOCK_NOTABLE)


def rule_concurrency(ev: Evidence) -> Finding | None:
    """Closed loop, nothing busy: each client waits for its last answer, so throughput is
    clients / latency. Checked by that arithmetic, not assumed."""
    if ev.native.rate_tps or ev.host_busy_pct >= CONCURRENCY_HOST_BUSY_PCT:
        return None
    clients = ev.native.clients
    latency = _figure(ev.native.latency_ms, "mean")
    tps = ev.native.tps
    if clients <= 0 or latency <= 0 or tps <= 0:
        return None
    bound = clients * 1000.0 / latency
    if not CONCURRENCY_MATCH <= tps / bound <= 1.0 / CONCURRENCY_MATCH:
        return None
    return Finding(
        "concurrency",
        f"concurrency ({clients} client{'s' if clients != 1 else ''}, closed loop)",
        f"nothing saturated (host CPU {ev.host_busy_pct:.0f}% busy, dbscale's workers "
        f"{ev.mean('client_cpu_cores'):.2f} cores"
        + (f", server {ev.server_cores:.2f} cores" if ev.server_local else "")
        + f"); {tps:.0f} tps ≈ {clients} clients / {latency:.2f} ms latency = {bound:.0f}; "
        "add clients to find the limit",
        {"tps": round(tps, 1), "clients_over_latency_tps": round(bound, 1)},
    )


RULES = (
    rule_target_rate, rule_client_cpu, rule_connection_rate, *CLUSTER_RULES, rule_locks, rule_io,
    rule_host_cpu, rule_client_starved, rule_server_cpu, rule_network, rule_weak_locks,
    rule_concurrency,
)  # fmt: skip
