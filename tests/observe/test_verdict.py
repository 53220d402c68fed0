"""The verdict rules on synthetic evidence: each limit provoked on paper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbscale.observe.verdict import client_saturation, judge
from dbscale.observe.waits import WaitHistogram
from dbscale.results.record import RunRecord

IDLE_HOST = {"host_idle_pct": 70.0, "host_iowait_pct": 0.0}


def _native(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "clients": 8, "duration_s": 10.0, "tps": 1000.0, "transactions": 10000, "failed": 0,
        "connect": "persistent", "rate_tps": None, "latency_ms": {"mean": 2.0, "p99": 6.0},
        "connect_ms": {"count": 8, "mean": 3.0},
    }  # fmt: skip
    return {**base, **fields}


def _waits(events: Mapping[str, int], samples: int = 50, idle: int = 0) -> WaitHistogram:
    waits = WaitHistogram()
    for _ in range(samples):
        waits.add([["active", e, n] for e, n in events.items()] + [["idle", None, idle]])
    return waits


def _judge(
    means: Mapping[str, float],
    native: Mapping[str, Any] | None = None,
    waits: WaitHistogram | None = None,
    **kw: Any,
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "rows": 10, "server_local": True, "server_vcpus": 2, "client_capacity_cores": 2.0,
        "host_cpus": 2,
    }  # fmt: skip
    options.update(kw)
    verdict = judge(RunRecord.from_json(dict(native or _native())), means, waits, **options)
    return verdict.model_dump(mode="json", exclude_unset=True)


def test_target_rate_when_keeping_up() -> None:
    native = _native(rate_tps=300.0, tps=298.7, schedule_lag_ms={"p99": 3.8}, late_starts=500)
    verdict = _judge(IDLE_HOST, native)
    assert verdict["verdict"] == "target-rate"
    assert "298.7 tps of 300 wanted" in verdict["evidence"]
    assert verdict["client_bound"] is False


def test_target_rate_allows_for_poisson_arrivals_in_a_short_run() -> None:
    # 3 s at 200/s: 600 +- 24.5 arrivals. 539 done is 2.5 deviations short, chance, not a limit.
    short = {"duration_s": 3.0, "rate_tps": 200.0, "schedule_lag_ms": {"p99": 1.1}}
    chance = _native(**short, tps=179.7, transactions=539)
    assert _judge(IDLE_HOST, chance)["verdict"] == "target-rate"
    # 480 done is 4.9 deviations short: the rate was not delivered.
    behind = _native(**short, tps=160.0, transactions=480)
    assert _judge(IDLE_HOST, behind)["verdict"] != "target-rate"
    # A long run is held to 90% of the rate whatever the noise.
    long_run = _native(duration_s=600.0, rate_tps=200.0, schedule_lag_ms={"p99": 1.1},
                       tps=170.0, transactions=102000)  # fmt: skip
    assert _judge(IDLE_HOST, long_run)["verdict"] != "target-rate"


def test_rate_not_met_falls_through() -> None:
    native = _native(rate_tps=5000.0, tps=3100.0, schedule_lag_ms={"p99": 900.0})
    means = {"host_idle_pct": 1.0, "server_cpu_user_cores": 1.2, "server_cpu_system_cores": 0.4,
             "process_cpu_cores": 0.3, "client_cpu_cores": 0.3}  # fmt: skip
    assert _judge(means, native)["verdict"] == "server-cpu"


def test_client_quota_throttled_is_client_bound_and_warns() -> None:
    means = {**IDLE_HOST, "client_throttled_pct": 6.0, "client_throttled_periods_pct": 85.0,
             "client_cpu_cores": 0.18, "process_cpu_cores": 0.19}  # fmt: skip
    verdict = _judge(means, client_capacity_cores=0.2)
    assert verdict["verdict"] == "client-cpu"
    assert "throttled it in 85% of its CPU periods (6% of the time)" in verdict["evidence"]
    assert "0.19 cores of a 0.20-core limit" in verdict["evidence"]
    assert verdict["client_bound"] is True
    assert "measured dbscale" in verdict["warning"]
    assert verdict["hint"]


def test_client_workers_saturated() -> None:
    means = {**IDLE_HOST, "client_cpu_cores": 0.97}
    verdict = _judge(means, client_capacity_cores=1.0)
    assert verdict["verdict"] == "client-cpu"
    assert "0.97 cores of the 1 they can use" in verdict["evidence"]


def test_connection_rate() -> None:
    native = _native(connect="per-transaction", clients=4, duration_s=5.0, tps=240.0,
                     connect_ms={"count": 1200, "mean": 14.7})  # fmt: skip
    means = {"host_idle_pct": 1.0, "server_cpu_user_cores": 0.6, "server_cpu_system_cores": 0.8}
    verdict = _judge(means, native)
    assert verdict["verdict"] == "connection-rate"
    assert "240 connections/s" in verdict["evidence"]
    assert verdict["numbers"]["connect_share_pct"] == 88.2
    assert [a["verdict"] for a in verdict["also"]] == ["server-cpu"]


def test_lock_contention_wins_over_busy_cpu() -> None:
    waits = _waits({"Lock:transactionid": 10, "Lock:tuple": 2, "CPU": 1})
    means = {"host_idle_pct": 3.0, "server_cpu_user_cores": 1.2, "server_cpu_system_cores": 0.3}
    verdict = _judge(means, waits=waits)
    assert verdict["verdict"] == "lock-contention"
    assert "Lock:transactionid 77%" in verdict["evidence"]
    assert verdict["also"][0]["verdict"] == "server-cpu"


def test_latch_contention() -> None:
    verdict = _judge(IDLE_HOST, waits=_waits({"LWLock:BufferContent": 6, "CPU": 4}))
    assert verdict["verdict"] == "lock-contention"
    assert verdict["summary"] == "latch (LWLock) contention"


def test_wal_flush_and_io() -> None:
    wal = _judge({**IDLE_HOST, "host_iowait_pct": 20.0}, waits=_waits({"IO:WALSync": 6, "CPU": 4}))
    assert wal["verdict"] == "wal-flush"
    assert "iowait 20%" in wal["evidence"]
    io = _judge(IDLE_HOST, waits=_waits({"IO:DataFileRead": 5, "CPU": 5}))
    assert io["verdict"] == "io"


def test_host_saturated_server_takes_most() -> None:
    means = {"host_idle_pct": 0.5, "host_softirq_pct": 10.0, "server_cpu_user_cores": 0.6,
             "server_cpu_system_cores": 0.5, "process_cpu_cores": 0.5, "client_cpu_cores": 0.48,
             "server_runq_cores": 12.8}  # fmt: skip
    verdict = _judge(means)
    assert verdict["verdict"] == "server-cpu"
    assert "host CPU 100% busy (2 CPUs): server 1.10 cores (55%)" in verdict["evidence"]
    assert "12.8 server processes waiting for a CPU" in verdict["evidence"]


def test_host_saturated_client_or_others_take_most() -> None:
    client = {"host_idle_pct": 0.0, "server_cpu_user_cores": 0.4, "process_cpu_cores": 1.2,
              "client_cpu_cores": 1.15}  # fmt: skip
    assert _judge(client, client_capacity_cores=2.0)["verdict"] == "client-cpu"
    others = {"host_idle_pct": 4.0, "server_cpu_user_cores": 0.5, "process_cpu_cores": 0.3,
              "client_cpu_cores": 0.26, "client_runq_cores": 0.7,
              "client_thread_busy_max_pct": 96.0}  # fmt: skip
    verdict = _judge(others)
    assert verdict["verdict"] == "host-contention"
    assert "other processes 1.12" in verdict["evidence"]
    # The client was starved too: listed, and the run is flagged as client-bound.
    assert [a["verdict"] for a in verdict["also"]] == ["client-cpu"]
    assert verdict["client_bound"] is True


def test_client_starved_on_an_otherwise_idle_host() -> None:
    means = {"host_idle_pct": 45.0, "client_cpu_cores": 0.3, "client_runq_cores": 0.65,
             "client_thread_busy_max_pct": 95.0, "server_cpu_user_cores": 0.3}  # fmt: skip
    verdict = _judge(means)
    assert verdict["verdict"] == "client-cpu"
    assert verdict["summary"] == "the load generator (starved of CPU)"


def test_server_confined_to_fewer_cpus() -> None:
    means = {"host_idle_pct": 50.0, "server_cpu_user_cores": 1.5, "server_cpu_system_cores": 0.45}
    verdict = _judge(means, host_cpus=8, server_vcpus=2)
    assert verdict["verdict"] == "server-cpu"
    assert "1.95 of the 2 CPUs" in verdict["evidence"]


def test_remote_server_cpu_is_not_guessed() -> None:
    verdict = _judge(IDLE_HOST, server_local=False, server_vcpus=None)
    assert verdict["verdict"] == "unknown"
    assert "nothing saturated" in verdict["evidence"]


def test_network_link_saturated() -> None:
    means = {**IDLE_HOST, "net.eth0.tx_bytes_per_s": 112_000_000.0}
    verdict = _judge(means, net_speed_mbps={"eth0": 1000.0, "lo": 0.0})
    assert verdict["verdict"] == "network"
    assert "896 Mbit/s of its 1000" in verdict["evidence"]


def test_unknown_names_what_was_not_saturated() -> None:
    waits = _waits({"CPU": 1}, idle=3)
    verdict = _judge({**IDLE_HOST, "client_cpu_cores": 0.05}, waits=waits)
    assert verdict["verdict"] == "unknown"
    assert "idle (waiting for their client) 75%" in verdict["evidence"]


def test_concurrency_when_nothing_is_busy() -> None:
    native = _native(clients=1, tps=1082.0, latency_ms={"mean": 0.92, "p99": 2.0})
    verdict = _judge({**IDLE_HOST, "client_cpu_cores": 0.1}, native)
    assert verdict["verdict"] == "concurrency"
    assert verdict["summary"] == "concurrency (1 client, closed loop)"
    assert "1082 tps ≈ 1 clients / 0.92 ms latency = 1087" in verdict["evidence"]


def test_too_short_to_judge() -> None:
    verdict = _judge({"host_idle_pct": 0.0, "client_throttled_pct": 90.0}, rows=1)
    assert verdict["verdict"] == "unknown"
    assert "too short" in verdict["evidence"]


def test_live_client_saturation_check() -> None:
    assert client_saturation([], 1.0) is None
    rows = [{"client_cpu_cores": 0.95}] * 3
    assert client_saturation(rows, 1.0) == "client workers used 0.95 of 1 cores"
    assert client_saturation([{"client_throttled_pct": 50.0}], 2.0) is not None
    assert client_saturation([{"client_throttled_periods_pct": 50.0}], 2.0) is not None
    assert client_saturation([{"client_cpu_cores": 0.5}], 2.0) is None


def test_other_processes_over_a_tenth_of_the_host_warn_whatever_the_verdict() -> None:
    # 2 CPUs, 60% busy: server 0.6, dbscale 0.3, other processes 0.3 cores (15%): a warning
    shared = {"host_idle_pct": 40.0, "server_cpu_user_cores": 0.6, "process_cpu_cores": 0.3,
              "client_cpu_cores": 0.28}  # fmt: skip
    verdict = _judge(shared)
    assert verdict["host_warning"].startswith(
        "other processes used 0.30 of the host's 2 CPUs (15%, above 10%)"
    )
    # 0.1 cores (5%) of others is within what a clean run tolerates
    clean = {**shared, "host_idle_pct": 50.0}
    assert "host_warning" not in _judge(clean)
    assert "host_warning" not in _judge(shared, rows=1)  # too short to judge anything


def test_hypervisor_steal_over_a_tenth_of_the_host_warns_too() -> None:
    """Measured on this VM during a capacity search: 17% steal on average (40% in its worst
    second) took TPC-B's p99 at 570/s from 6 ms to 469 ms; no process of the host's used it."""
    stolen = {"host_idle_pct": 50.0, "host_steal_pct": 17.0, "server_cpu_user_cores": 0.5,
              "process_cpu_cores": 0.16, "client_cpu_cores": 0.15}  # fmt: skip
    warning = _judge(stolen)["host_warning"]
    assert warning.startswith("the hypervisor took 17% of the host's CPU time as steal"), warning
    assert "other processes" not in warning
    assert "host_warning" not in _judge({**stolen, "host_steal_pct": 4.0, "host_idle_pct": 63.0})


def test_a_few_lock_samples_of_idle_sessions_are_no_verdict() -> None:
    # A paced run: 12 samples, 0.03 sessions active on average, all of them on a lock. That
    # says nothing about what limited the run.
    sparse = WaitHistogram()
    for i in range(12):
        sparse.add([["active", "Lock:transactionid", 1 if i == 0 else 0], ["idle", None, 10]])
    verdict = _judge({**IDLE_HOST, "client_cpu_cores": 0.05}, waits=sparse)
    assert verdict["verdict"] != "lock-contention", verdict
