"""Delta arithmetic: two snapshots of counters make one row of rates."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dbscale.observe.cgroup import ThrottleCounters
from dbscale.observe.procfs import HostCpuTimes, NetCounters
from dbscale.observe.resources import ResourceSnapshot, ThreadTimes, resource_row
from dbscale.observe.server_process import ServerTimes

SEC = 1_000_000_000


def _host(user: int, system: int, idle: int, softirq: int = 0, ctxt: int = 0) -> HostCpuTimes:
    total = {"user": user, "nice": 0, "system": system, "idle": idle, "iowait": 0, "irq": 0,
             "softirq": softirq, "steal": 0}  # fmt: skip
    half = {k: v // 2 for k, v in total.items()}
    return HostCpuTimes(total, [half, half], ctxt, 3, 0)


def _snapshot(mono: float, **changes: object) -> ResourceSnapshot:
    base = ResourceSnapshot(
        mono_s=mono,
        host=_host(0, 0, 0),
        engine={},
        observer=None,
        process_ticks=0,
        net={},
        server=None,
        throttle=None,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_engine_threads_cpu_queue_and_busiest() -> None:
    prev = _snapshot(10.0, engine={1: ThreadTimes(100, 50, 1 * SEC, 0)}, process_ticks=200)
    cur = _snapshot(
        12.0,
        # thread 1 ran 1.6 s and queued 0.3 s of the 2 s; thread 2 is new (started since).
        engine={1: ThreadTimes(220, 90, int(2.6 * SEC), int(0.3 * SEC)),
                2: ThreadTimes(10, 10, int(0.2 * SEC), 0)},
        process_ticks=380,
    )  # fmt: skip
    row = resource_row(prev, cur, clk_tck=100)
    assert row["client_threads"] == 2
    assert row["client_cpu_cores"] == pytest.approx((1.6 + 0.2) / 2)
    assert row["client_runq_cores"] == pytest.approx(0.15)
    assert row["client_cpu_user_cores"] == pytest.approx(130 / 100 / 2)
    assert row["client_cpu_system_cores"] == pytest.approx(50 / 100 / 2)
    assert row["client_thread_busy_max_pct"] == pytest.approx(95.0)
    assert row["process_cpu_cores"] == pytest.approx(0.9)


def test_host_states_as_shares_of_all_cpus() -> None:
    prev = _snapshot(0.0, host=_host(1000, 500, 3000, ctxt=10))
    cur = _snapshot(1.0, host=_host(1100, 540, 3040, softirq=20, ctxt=5010))
    row = resource_row(prev, cur)
    assert row["host_user_pct"] == pytest.approx(50.0)
    assert row["host_system_pct"] == pytest.approx(20.0)
    assert row["host_idle_pct"] == pytest.approx(20.0)
    assert row["host_softirq_pct"] == pytest.approx(10.0)
    assert row["host_ctxt_per_s"] == 5000
    assert row["host_busiest_cpu_pct"] == pytest.approx(80.0)


def test_server_tree_and_exited_backends() -> None:
    prev_server = ServerTimes(100, 40, 0, 1000, 5, True, {10: (SEC, 0), 11: (SEC, SEC)})
    # 11 exited (its CPU went to the parent's cutime, its schedstat is gone); 12 is new.
    cur_server = ServerTimes(
        250, 90, 4096, 3000, 5, True, {10: (2 * SEC, SEC // 2), 12: (SEC // 4, 0)}
    )
    row = resource_row(_snapshot(0.0, server=prev_server), _snapshot(1.0, server=cur_server), 100)
    assert row["server_cpu_user_cores"] == pytest.approx(1.5)
    assert row["server_cpu_system_cores"] == pytest.approx(0.5)
    assert row["server_runq_cores"] == pytest.approx(0.5)
    assert row["server_read_bytes_per_s"] == 4096
    assert row["server_write_bytes_per_s"] == 2000


def test_unreadable_server_io_is_left_out() -> None:
    server = ServerTimes(0, 0, 0, 0, 1, False, {})
    row = resource_row(_snapshot(0.0, server=server), _snapshot(1.0, server=server))
    assert "server_read_bytes_per_s" not in row
    assert row["server_processes"] == 1


def test_network_throttling_and_frequency() -> None:
    prev = _snapshot(
        0.0,
        net={"lo": NetCounters(1000, 10, 1000, 10)},
        throttle=ThrottleCounters(10, 0, 1.0),
    )
    cur = _snapshot(
        0.5,
        net={"lo": NetCounters(6000, 60, 3000, 30), "eth1": NetCounters(5, 1, 5, 1)},
        throttle=ThrottleCounters(15, 4, 1.2),
        mhz=[2000.0, 3000.0],
    )
    row = resource_row(prev, cur)
    assert row["net.lo.rx_bytes_per_s"] == 10000
    assert row["net.lo.tx_packets_per_s"] == 40
    assert "net.eth1.rx_bytes_per_s" not in row  # appeared since: no baseline
    assert row["client_throttled_pct"] == pytest.approx(40.0)
    assert row["client_throttled_periods_pct"] == pytest.approx(80.0)
    assert (row["cpu_mhz_min"], row["cpu_mhz_mean"], row["cpu_mhz_max"]) == (2000, 2500, 3000)


def test_no_time_passed_gives_no_row() -> None:
    assert resource_row(_snapshot(1.0), _snapshot(1.0)) == {}
