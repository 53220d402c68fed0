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

from dbscale.files import write_atomic
from dbscale.observe.cgroup import cpu_cgroup
from dbscale.observe.host_facts import CpuFrequency, CpuTopology, HostFacts
from dbscale.observe.procfs import ProcFs, parse_cpuinfo_mhz, parse_meminfo_kib
from dbscale.observe.section import ServerFacts
from dbscale.values import parse_cpu_list

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


def cpu_topology(cpu_sysfs: Path = CPU_SYSFS) -> CpuTopology:
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
    logical = len(online) or os.cpu_count() or 0
    if not cores:
        return CpuTopology(logical_cpus=logical)
    return CpuTopology(
        logical_cpus=logical, cores=len(cores), sockets=len(sockets),
        threads_per_core=max(1, round(len(online) / len(cores))),
    )  # fmt: skip


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


def cpu_frequency(cpu_sysfs: Path = CPU_SYSFS, proc: ProcFs | None = None) -> CpuFrequency:
    """Governor, driver, frequency range and boost; /proc/cpuinfo's MHz when cpufreq is absent
    (common in VMs, where the guest cannot see or change the host's frequency)."""
    freq = cpu_sysfs / "cpu0" / "cpufreq"

    def mhz_of(name: str) -> float | None:
        value = _read(freq / name)
        return int(value) / 1000.0 if value and value.isdigit() else None

    boost = _read(cpu_sysfs / "cpufreq" / "boost")
    no_turbo = _read(cpu_sysfs / "intel_pstate" / "no_turbo")
    mhz = parse_cpuinfo_mhz((proc or ProcFs()).read("cpuinfo") or "")
    return CpuFrequency(
        cpu_governor=_read(freq / "scaling_governor")
        or "none (no cpufreq: fixed or host-controlled)",
        cpu_freq_driver=_read(freq / "scaling_driver") or None,
        cpu_min_mhz=mhz_of("cpuinfo_min_freq"),
        cpu_max_mhz=mhz_of("cpuinfo_max_freq"),
        cpu_boost=(boost == "1") if boost is not None
        else (no_turbo == "0") if no_turbo is not None else None,
        cpu_mhz_now=round(sum(mhz) / len(mhz), 1) if mhz else None,
        smt=_read(cpu_sysfs / "smt" / "control") or None,
    )  # fmt: skip


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


def client_host_facts(proc: ProcFs | None = None) -> HostFacts:
    """Everything we can say about this machine and this process's share of it."""
    proc = proc or ProcFs()
    lscpu = lscpu_facts()
    nodes = numa_nodes()
    caches = {k: v for k, v in lscpu.items() if k.startswith("cache_")} or sysfs_caches()
    meminfo = parse_meminfo_kib(proc.read("meminfo") or "")
    cgroup = cpu_cgroup(proc)
    return HostFacts.model_validate(
        {
            "cpu_model": lscpu.get("cpu_model") or _cpuinfo_model(proc),
            "cpu_vendor": lscpu.get("cpu_vendor"),
            "architecture": platform.machine(),
            **cpu_topology().model_dump(exclude_none=True),
            "numa_nodes": len(nodes) or 1,
            "numa_cpus": nodes,
            **caches,
            "memory_gib": round(meminfo["MemTotal"] / 1024**2, 2)
            if "MemTotal" in meminfo
            else None,
            "hugepages_total": meminfo.get("HugePages_Total"),
            "transparent_hugepages": _read(Path("/sys/kernel/mm/transparent_hugepage/enabled"))
            or None,
            "kernel": platform.release(),
            "os": os_release(),
            "virtualization": virtualization(lscpu, proc),
            "clocksource": _read(
                Path("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            ),
            **cpu_frequency(proc=proc).model_dump(exclude_none=True),
            "net_speed_mbps": link_speeds(),
            "client_cpus_allowed": len(os.sched_getaffinity(0)),
            "client_cpu_quota_cores": cgroup.quota_cores if cgroup else None,
            "python": platform.python_version(),
        }
    )


def _cpuinfo_model(proc: ProcFs) -> str | None:
    for line in (proc.read("cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return None


def write_host_file(
    directory: Path, client: HostFacts, servers: Mapping[str, ServerFacts] | None = None
) -> Path:
    """host.json in the results directory (rewritten when server facts arrive later)."""
    path = directory / HOST_FILE
    content = {
        "client": client.model_dump(mode="json", exclude_none=True),
        "servers": {url: s.model_dump(mode="json") for url, s in (servers or {}).items()},
    }
    write_atomic(path, json.dumps(content, indent=2) + "\n")
    return path
