"""Host facts from lscpu's JSON and sysfs."""

from __future__ import annotations

import json
from pathlib import Path

from dbscale.observe.host import (
    client_host_facts,
    cpu_frequency,
    cpu_topology,
    link_speeds,
    numa_nodes,
    parse_lscpu_json,
    sysfs_caches,
    write_host_file,
)
from dbscale.observe.procfs import ProcFs

LSCPU = {"lscpu": [
    {"field": "Model name:", "data": "AMD EPYC"},
    {"field": "Hypervisor vendor:", "data": "KVM"},
    {"field": "Virtualization type:", "data": "full"},
    {"field": "L3 cache:", "data": "32 MiB (1 instance)"},
    {"field": "Flags:", "data": "fpu vme"},
]}  # fmt: skip


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_lscpu_fields() -> None:
    facts = parse_lscpu_json(json.dumps(LSCPU))
    assert facts == {"cpu_model": "AMD EPYC", "hypervisor": "KVM", "virtualization_type": "full",
                     "cache_l3": "32 MiB (1 instance)"}  # fmt: skip
    assert parse_lscpu_json("not json") == {}


def test_topology_numa_caches_and_frequency(tmp_path: Path) -> None:
    cpu = tmp_path / "cpu"
    _write(cpu / "online", "0-3\n")
    for n in range(4):
        _write(cpu / f"cpu{n}/topology/physical_package_id", f"{n // 2}\n")
        _write(cpu / f"cpu{n}/topology/core_id", "0\n")
    _write(cpu / "cpu0/cache/index0/level", "1\n")
    _write(cpu / "cpu0/cache/index0/type", "Data\n")
    _write(cpu / "cpu0/cache/index0/size", "48K\n")
    _write(cpu / "cpu0/cache/index0/shared_cpu_list", "0\n")
    _write(cpu / "cpu0/cpufreq/scaling_governor", "performance\n")
    _write(cpu / "cpu0/cpufreq/cpuinfo_max_freq", "3500000\n")
    _write(cpu / "cpufreq/boost", "1\n")
    node = tmp_path / "node"
    _write(node / "node0/cpulist", "0-1\n")
    _write(node / "node1/cpulist", "2-3\n")
    assert cpu_topology(cpu).model_dump(exclude_none=True) == {
        "logical_cpus": 4,
        "cores": 2,
        "sockets": 2,
        "threads_per_core": 2,
    }
    assert numa_nodes(node) == {"node0": [0, 1], "node1": [2, 3]}
    assert sysfs_caches(cpu) == {"cache_l1d": "48K (shared by CPUs 0)"}
    freq = cpu_frequency(cpu, ProcFs(tmp_path / "noproc")).model_dump(exclude_none=True)
    assert freq == {"cpu_governor": "performance", "cpu_max_mhz": 3500.0, "cpu_boost": True}


def test_frequency_without_cpufreq(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    _write(proc / "cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2596.122\n")
    freq = cpu_frequency(tmp_path / "cpu", ProcFs(proc))
    assert (freq.cpu_governor or "").startswith("none")
    assert freq.cpu_mhz_now == 2596.1


def test_link_speeds(tmp_path: Path) -> None:
    _write(tmp_path / "eth0/speed", "10000\n")
    _write(tmp_path / "veth1/speed", "-1\n")
    assert link_speeds(tmp_path) == {"eth0": 10000.0}


def test_this_machine_and_host_file(tmp_path: Path) -> None:
    facts = client_host_facts().model_dump(exclude_none=True)
    assert facts["logical_cpus"] >= 1
    assert facts["kernel"]
    assert facts["client_cpus_allowed"] >= 1
    short = client_host_facts().summary().model_dump(exclude_none=True)
    assert set(short) <= set(facts)
    assert "numa_cpus" not in short
    path = write_host_file(tmp_path / "results", client_host_facts())
    assert json.loads(path.read_text())["client"]["kernel"] == facts["kernel"]
