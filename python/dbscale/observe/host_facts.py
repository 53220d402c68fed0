"""The client host's facts, typed: `HostSummary` is what every run record repeats (its `observe`
section's `host`), `HostFacts` all of it (host.json's `client`). What could not be read is
None and left out when written. Tolerant like the record: a fact another version wrote is kept.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CpuTopology(BaseModel):
    """Logical CPUs, cores, sockets and threads per core (sysfs topology)."""

    logical_cpus: int | None = None
    cores: int | None = None
    sockets: int | None = None
    threads_per_core: int | None = None


class CpuFrequency(BaseModel):
    """Governor, driver, frequency range, boost and SMT (cpufreq; /proc/cpuinfo's MHz)."""

    cpu_governor: str | None = None
    cpu_freq_driver: str | None = None
    cpu_min_mhz: float | None = None
    cpu_max_mhz: float | None = None
    cpu_boost: bool | None = None
    cpu_mhz_now: float | None = None
    smt: str | None = None


class HostSummary(BaseModel):
    """The facts each run record repeats, flat."""

    model_config = ConfigDict(extra="allow")

    cpu_model: str | None = None
    logical_cpus: int | None = None
    cores: int | None = None
    sockets: int | None = None
    threads_per_core: int | None = None
    numa_nodes: int | None = None
    memory_gib: float | None = None
    kernel: str | None = None
    virtualization: str | None = None
    clocksource: str | None = None
    cpu_governor: str | None = None
    cpu_max_mhz: float | None = None
    client_cpus_allowed: int | None = None
    client_cpu_quota_cores: float | None = None

    def shown(self) -> dict[str, str]:
        """Each fact that was read, as text (for reports)."""
        return {
            k: str(v)
            for k, v in self.model_dump(exclude_none=True).items()
            if not isinstance(v, dict | list)
        }


class HostFacts(HostSummary):
    """Everything dbscale could read about the machine it ran on (host.json's `client`)."""

    cpu_vendor: str | None = None
    architecture: str | None = None
    numa_cpus: dict[str, list[int]] = Field(default_factory=dict)
    cache_l1d: str | None = None
    cache_l1i: str | None = None
    cache_l2: str | None = None
    cache_l3: str | None = None
    hugepages_total: int | None = None
    transparent_hugepages: str | None = None
    os: str | None = None
    cpu_freq_driver: str | None = None
    cpu_min_mhz: float | None = None
    cpu_boost: bool | None = None
    cpu_mhz_now: float | None = None
    smt: str | None = None
    net_speed_mbps: dict[str, float] = Field(default_factory=dict)
    python: str | None = None
    dbscale_version: str | None = None
    dbscale_core_version: str | None = None

    def summary(self) -> HostSummary:
        return HostSummary.model_validate(
            self.model_dump(include=set(HostSummary.model_fields), exclude_none=True)
        )
