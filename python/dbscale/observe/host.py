"""Facts about the machine dbscale runs on, gathered once per invocation: CPU model and topology,
NUMA nodes, caches, memory, kernel, virtualization, clock source, CPU governor and frequency
range, and the CPU the client may use (affinity, cgroup quota). The Cloud Report found NUMA
placement and CPU frequency behind most of the gap between small and large machines; a number
without them is hard to compare.

Read from sysfs and procfs (and `lscpu -J` for what it says better, when installed); anything
missing is left out, never an error.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dbscale.files import write_atomic
from dbscale.observe.cgroup import cpu_cgroup
from dbscale.observe.procfs import ProcFs, parse_cpuinfo_mhz, parse_meminfo_kib
from dbscale.values import JsonObject, parse_cpu_list

HOST_FILE = "host.json"
CPU_SYSFS = Path("/sys/devices/system/cpu")
NODE_SYSFS = Path("/sys/devices/system/node")
LSCPU_FIELDS = {
    "Model name:": "cpu_model",
    "Vendor ID:": "cpu_vendor",
    "Hypervisor vendor:": "hypervisor",
    "Virtualization type:": "virtualization_type",
    "L1d cache:": "cache_l1d",
    "L1i cache:": "cache_l1i",
    "L2 cache:": "cache_l2",
    "L3 cache:": "cache_l3",
}
# The few facts every run record repeats (the rest is in host.json).
SHORT_KEYS = (
    "cpu_model", "logical_cpus", "cores", "sockets", "threads_per_core", "numa_nodes",
    "memory_gib", "kernel", "virtualization", "clocksource", "cpu_governor", "cpu_max_mhz",
    "client_cpus_allowed", "client_cpu_quota_cores",
)  # fmt: skip


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, ValueError):
        return None


def parse_lscpu_json(text: str) -> dict[str, str]:
    """The `lscpu -J` fields we keep, under our names."""
    try:
        entries = json.loads(text).get("lscpu", [])
    except (ValueError, AttributeError):
        return {}
    out: dict[str, str] = {}
    for entry in entries:
        key = LSCPU_FIELDS.get(str(entry.get("field", "")))
        if key and entry.get("data"):
            out[key] = str(entry["data"])
    return out


def lscpu_facts() -> dict[str, str]:
    exe = shutil.which("lscpu")
    if exe is None:
        return {}
    try:
        done = subprocess.run(
            [exe, "-J"], capture_output=True, text=True, timeout=5, check=False,
            env={**os.environ, "LC_ALL": "C"},
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    return parse_lscpu_json(done.stdout) if done.returncode == 0 else {}


def cpu_topology(cpu_sysfs: Path = CPU_SYSFS) -> JsonObject:
    """Logical CPUs, cores, sockets and threads per core from sysfs topology files."""
    online = parse_cpu_list(_read(cpu_sysfs / "online") or "")
    cores: set[tuple[str, str]] = set()
    sockets: set[str] = set()
    for cpu in online:
        topo = cpu_sysfs / f"cpu{cpu}" / "topology"
        package = _read(topo / "physical_package_id") or "0"
        core = _read(topo / "core_id") or str(cpu)
        sockets.add(package)
        cores.add((package, core))
    out: JsonObject = {"logical_cpus": len(online) or os.cpu_count() or 0}
    if cores:
        out.update(cores=len(cores), sockets=len(sockets))
        out["threads_per_core"] = max(1, round(len(online) / len(cores)))
    return out


def numa_nodes(node_sysfs: Path = NODE_SYSFS) -> dict[str, list[int]]:
    nodes: dict[str, list[int]] = {}
    for cpulist in sorted(node_sysfs.glob("node[0-9]*/cpulist")):
        nodes[cpulist.parent.name] = parse_cpu_list(_read(cpulist) or "")
    return nodes


def sysfs_caches(cpu_sysfs: Path = CPU_SYSFS) -> dict[str, str]:
    """cpu0's caches (`L1d: 48K shared with 0`), when lscpu is not there to summarize them."""
    out: dict[str, str] = {}
    for index in sorted((cpu_sysfs / "cpu0" / "cache").glob("index[0-9]*")):
        level, kind = _read(index / "level"), _read(index / "type")
        size = _read(index / "size")
        if not (level and kind and size):
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        out[f"cache_l{level}{suffix}"] = (
            f"{size} (shared by CPUs {_read(index / 'shared_cpu_list')})"
        )
    return out


def cpu_frequency(cpu_sysfs: Path = CPU_SYSFS, proc: ProcFs | None = None) -> JsonObject:
    """Governor, driver, frequency range and boost; /proc/cpuinfo's MHz when cpufreq is absent
    (common in VMs, where the guest cannot see or change the host's frequency)."""
    freq = cpu_sysfs / "cpu0" / "cpufreq"
    out: JsonObject = {}
    for name, key in (("scaling_governor", "cpu_governor"), ("scaling_driver", "cpu_freq_driver")):
        value = _read(freq / name)
        if value:
            out[key] = value
    for name, key in (("cpuinfo_min_freq", "cpu_min_mhz"), ("cpuinfo_max_freq", "cpu_max_mhz")):
        value = _read(freq / name)
        if value and value.isdigit():
            out[key] = int(value) / 1000.0
    boost = _read(cpu_sysfs / "cpufreq" / "boost")
    no_turbo = _read(cpu_sysfs / "intel_pstate" / "no_turbo")
    if boost is not None:
        out["cpu_boost"] = boost == "1"
    elif no_turbo is not None:
        out["cpu_boost"] = no_turbo == "0"
    if not out.get("cpu_governor"):
        out["cpu_governor"] = "none (no cpufreq: fixed or host-controlled)"
    mhz = parse_cpuinfo_mhz((proc or ProcFs()).read("cpuinfo") or "")
    if mhz:
        out["cpu_mhz_now"] = round(sum(mhz) / len(mhz), 1)
    smt = _read(cpu_sysfs / "smt" / "control")
    if smt:
        out["smt"] = smt
    return out


def virtualization(lscpu: Mapping[str, str], proc: ProcFs) -> str:
    if lscpu.get("hypervisor"):
        return f"{lscpu['hypervisor']} ({lscpu.get('virtualization_type', 'virtual')})"
    hypervisor = _read(Path("/sys/hypervisor/type"))
    if hypervisor:
        return hypervisor
    flags = next(
        (line for line in (proc.read("cpuinfo") or "").splitlines() if line.startswith("flags")),
        "",
    )
    return "virtual (unknown hypervisor)" if " hypervisor" in flags else "none detected"


def link_speeds(net_sysfs: Path = Path("/sys/class/net")) -> dict[str, float]:
    """Link speed in Mbit/s of each interface that reports one (virtual NICs often do not)."""
    speeds: dict[str, float] = {}
    for speed_file in sorted(net_sysfs.glob("*/speed")):
        value = _read(speed_file)
        if value and value.lstrip("-").isdigit() and int(value) > 0:
            speeds[speed_file.parent.name] = float(value)
    return speeds


def os_release() -> str | None:
    for line in (_read(Path("/etc/os-release")) or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip('"')
    return None


def client_host_facts(proc: ProcFs | None = None) -> JsonObject:
    """Everything we can say about this machine and this process's share of it."""
    proc = proc or ProcFs()
    lscpu = lscpu_facts()
    facts: JsonObject = {
        "cpu_model": lscpu.get("cpu_model") or _cpuinfo_model(proc),
        "cpu_vendor": lscpu.get("cpu_vendor"),
        "architecture": platform.machine(),
    }
    facts.update(cpu_topology())
    nodes = numa_nodes()
    facts["numa_nodes"] = len(nodes) or 1
    facts["numa_cpus"] = nodes
    caches = {k: v for k, v in lscpu.items() if k.startswith("cache_")} or sysfs_caches()
    facts.update(caches)
    meminfo = parse_meminfo_kib(proc.read("meminfo") or "")
    if "MemTotal" in meminfo:
        facts["memory_gib"] = round(meminfo["MemTotal"] / 1024**2, 2)
    facts["hugepages_total"] = meminfo.get("HugePages_Total")
    thp = _read(Path("/sys/kernel/mm/transparent_hugepage/enabled"))
    if thp:
        facts["transparent_hugepages"] = thp
    facts["kernel"] = platform.release()
    facts["os"] = os_release()
    facts["virtualization"] = virtualization(lscpu, proc)
    facts["clocksource"] = _read(
        Path("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    )
    facts.update(cpu_frequency(proc=proc))
    facts["net_speed_mbps"] = link_speeds()
    facts["client_cpus_allowed"] = len(os.sched_getaffinity(0))
    cgroup = cpu_cgroup(proc)
    facts["client_cpu_quota_cores"] = cgroup.quota_cores if cgroup else None
    facts["python"] = platform.python_version()
    return {k: v for k, v in facts.items() if v is not None}


def _cpuinfo_model(proc: ProcFs) -> str | None:
    for line in (proc.read("cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return None


def short_facts(facts: Mapping[str, Any]) -> JsonObject:
    """The facts each run record repeats, flat."""
    return {k: facts[k] for k in SHORT_KEYS if k in facts}


def write_host_file(directory: Path, facts: Mapping[str, Any]) -> Path:
    """host.json in the results directory (rewritten when server facts arrive later)."""
    path = directory / HOST_FILE
    write_atomic(path, json.dumps(facts, indent=2, default=str) + "\n")
    return path
