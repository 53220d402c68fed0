"""The /proc parsers against files captured on a real machine."""

from __future__ import annotations

import os
from pathlib import Path

from dbscale.observe.procfs import (
    ProcFs,
    parse_cpuinfo_mhz,
    parse_listening_inodes,
    parse_meminfo_kib,
    parse_net_dev,
    parse_pid_io,
    parse_pid_stat,
    parse_proc_stat,
    parse_schedstat,
    parse_unix_inodes,
)
from dbscale.values import parse_cpu_list
from tests.observe.conftest import fixture_text, write_process


def test_proc_stat_totals_per_cpu_and_counters() -> None:
    stat = parse_proc_stat(fixture_text("proc_stat.txt"))
    assert stat.total == {
        "user": 226655, "nice": 493, "system": 68461, "idle": 408780, "iowait": 4325,
        "irq": 0, "softirq": 16333, "steal": 203,
    }  # fmt: skip
    assert len(stat.per_cpu) == 2
    assert stat.per_cpu[1]["user"] == 119400
    assert stat.ctxt == 38028174
    assert stat.procs_running == 4
    assert stat.procs_blocked == 0


def test_pid_stat_of_the_postmaster() -> None:
    stat = parse_pid_stat(fixture_text("pid_stat_postmaster.txt"))
    assert (stat.pid, stat.comm, stat.state, stat.ppid) == (10758, "postgres", "S", 1)
    assert (stat.utime, stat.stime, stat.cutime, stat.cstime) == (3, 69, 1683, 1558)
    assert stat.num_threads == 1
    assert stat.starttime == 300073


def test_pid_stat_with_spaces_and_parentheses_in_comm() -> None:
    stat = parse_pid_stat(fixture_text("pid_stat_odd_comm.txt"))
    assert stat.comm == "postgres: bench (x)"
    assert (stat.ppid, stat.utime, stat.stime, stat.cutime, stat.cstime) == (4200, 250, 75, 3, 4)
    assert stat.starttime == 987654


def test_schedstat_and_io() -> None:
    sched = parse_schedstat(fixture_text("schedstat.txt"))
    assert (sched.run_ns, sched.wait_ns, sched.slices) == (730627018, 2508147427, 1662)
    io = parse_pid_io(fixture_text("pid_io.txt"))
    assert io["read_bytes"] == 13664256
    assert io["write_bytes"] == 51679232


def test_net_dev_every_interface() -> None:
    net = parse_net_dev(fixture_text("net_dev.txt"))
    assert set(net) == {"lo", "ifb0", "ifb1", "eth0"}
    assert net["lo"].rx_bytes == 13769401946
    assert net["lo"].rx_packets == 31668998
    assert net["lo"].tx_bytes == 13769401946
    assert net["ifb0"].tx_packets == 0


def test_cpuinfo_meminfo_and_cpu_lists() -> None:
    assert parse_cpuinfo_mhz(fixture_text("cpuinfo.txt")) == [2596.122, 2596.122]
    assert parse_meminfo_kib(fixture_text("meminfo.txt"))["MemTotal"] == 24684092
    assert parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpu_list("") == []


def test_listening_sockets_by_port_and_path() -> None:
    tcp = fixture_text("net_tcp.txt")
    assert parse_listening_inodes(tcp, 0x9C9B) == {94370}
    assert parse_listening_inodes(tcp, 5432) == set()
    unix = fixture_text("net_unix.txt")
    assert parse_unix_inodes(unix, "/tmp/pglead/.s.PGSQL.55432") == {25575}


def test_procfs_reads_a_process_tree(fake_proc: Path) -> None:
    write_process(fake_proc, 100, ppid=1, children=(101, 102), utime=5)
    write_process(fake_proc, 101, ppid=100, children=(103,))
    write_process(fake_proc, 102, ppid=100)
    write_process(fake_proc, 103, ppid=101)
    proc = ProcFs(fake_proc)
    assert sorted(proc.descendants(100)) == [100, 101, 102, 103]
    assert proc.pid_stat(100) is not None
    assert proc.pid_stat(999) is None  # gone: not an error
    assert proc.pid_io(999) is None
    assert sorted(proc.pids()) == [100, 101, 102, 103]


def test_procfs_on_this_machine() -> None:
    proc = ProcFs()
    assert proc.host_cpu() is not None
    me = proc.pid_stat(os.getpid())
    assert me is not None and me.num_threads >= 1
    assert "lo" in proc.net_dev()
