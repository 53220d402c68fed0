"""The evidence a verdict reasons with, built once per run from the window's resource means, the
wait histogram and the native result; and a `Finding`, what one rule concludes from it.

CPU is counted in cores (CPU-seconds per second) and as shares of the whole host, because client
and server may share one machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dbscale.core.result import RunResult
from dbscale.observe.cluster import ClusterObservation
from dbscale.observe.waits import WaitHistogram


@dataclass(frozen=True)
class Finding:
    verdict: str
    summary: str
    evidence: str
    numbers: Mapping[str, float | str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Evidence:
    """The run's numbers the rules read, built once by `gather`."""

    native: RunResult
    means: Mapping[str, float]
    waits: WaitHistogram | None
    rows: int
    server_local: bool
    server_vcpus: int | None
    client_capacity_cores: float
    host_cpus: int
    net_speed_mbps: Mapping[str, float] = field(default_factory=dict)
    cluster: ClusterObservation | None = None

    def mean(self, key: str) -> float:
        return float(self.means.get(key, 0.0) or 0.0)

    @property
    def host_busy_pct(self) -> float:
        idle = self.mean("host_idle_pct") + self.mean("host_iowait_pct")
        return 100.0 - idle if "host_idle_pct" in self.means else 0.0

    @property
    def host_busy_cores(self) -> float:
        return self.host_busy_pct / 100.0 * self.host_cpus

    @property
    def server_cores(self) -> float:
        return self.mean("server_cpu_user_cores") + self.mean("server_cpu_system_cores")

    @property
    def process_cores(self) -> float:
        return max(self.mean("process_cpu_cores"), self.mean("client_cpu_cores"))

    @property
    def kernel_cores(self) -> float:
        """Interrupt and softirq time (loopback networking shows here) and hypervisor steal:
        busy, but no process's."""
        states = ("host_irq_pct", "host_softirq_pct", "host_steal_pct")
        return sum(self.mean(s) for s in states) / 100.0 * self.host_cpus

    @property
    def other_cores(self) -> float:
        """Busy CPU that neither dbscale nor the server used: other processes."""
        accounted = self.process_cores + self.server_cores + self.kernel_cores
        return max(self.host_busy_cores - accounted, 0.0)
