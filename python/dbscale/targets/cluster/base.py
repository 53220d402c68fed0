"""What every private cluster dbscale starts has in common: N nodes, each a `LocalServer` in
its own directory under the cluster's, started in order (the first bootstraps the cluster),
checked (every node up and in the cluster), each optionally held to a CPU budget (a cgroup
quota, halves allowed) and stopped in reverse order. A cluster also answers the fault steps of
a plan: stop or kill a node, start it again, and (PostgreSQL) promote a standby.
`GaleraCluster` and `PgSyncCluster` fill in how their engine forms and checks a cluster.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from dbscale.errors import LocalServerError
from dbscale.polling import poll_until
from dbscale.targets.local.confinement import MemoryCgroup, make_memory_cgroup, process_tree
from dbscale.targets.local.cpu_quota import CpuQuota, make_cpu_quota
from dbscale.targets.local.processes import dead_owner
from dbscale.targets.local.server import LocalServer, SettingValue

START_TIMEOUT_S = 120.0  # a joiner copies the whole data set before it answers
# Nodes still not in the cluster this long after they started are checked for data that cannot
# rejoin (a standby whose WAL the primary no longer has), rebuilt, and waited for again.
STALE_AFTER_S = 30.0


@dataclass(frozen=True)
class ClusterShape:
    """How many nodes, each node's CPU budget (a quota; None: unconfined) and settings."""

    nodes: int = 3
    vcpus: float | None = None
    memory_gib: float | None = None  # per node: sizes its settings, capped by a cgroup
    settings: dict[str, SettingValue] = field(default_factory=dict)


@dataclass
class NodeState:
    """One node as the cluster check saw it."""

    name: str
    url: str
    up: bool
    role: str  # primary, standby, synced, joining, ...
    detail: str = ""


class LocalCluster(ABC):
    """A private cluster in `base_dir` (node directories `n1`, `n2`, ...)."""

    engine: str  # mariadb-galera | postgresql-sync
    title: str

    def __init__(self, base_dir: Path, shape: ClusterShape, *, name: str) -> None:
        self.base_dir = base_dir.absolute()
        self.shape = shape
        self.name = name
        self.nodes: list[LocalServer[Any]] = []
        self._quotas: dict[int, CpuQuota] = {}
        self._memory: dict[int, MemoryCgroup] = {}
        self.confinement_note = ""
        self.memory_note = ""
        self._ours: set[int] = set()  # nodes this object started (and so stops)
        self.reaped_note = ""  # orphans of a killed dbscale stopped at start
        self.rebuilt_note = ""  # nodes whose stale data was rebuilt at start

    # -- what each engine does -------------------------------------------------------------

    @abstractmethod
    def _make_nodes(self) -> list[LocalServer[Any]]:
        """The nodes' servers, with the settings that join them into one cluster."""

    @abstractmethod
    def _start_node(self, index: int, *, first_start: bool) -> bool:
        """Starts node `index` (bootstrapping the cluster when it is the first to start);
        False when it already ran."""

    @abstractmethod
    def states(self) -> list[NodeState]:
        """Each node's state, read from the node itself."""

    @abstractmethod
    def _formed(self, states: Sequence[NodeState]) -> str | None:
        """None when the nodes form the whole cluster, else what is missing."""

    # -- addresses ---------------------------------------------------------------------------

    @property
    def urls(self) -> list[str]:
        """Each node's URL (TCP, the administrator's account)."""
        return [node.url for node in self.nodes]

    def node_name(self, index: int) -> str:
        return f"n{index + 1}"

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Starts every node in order (a node already running is used as it is) and waits
        until they form the cluster."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.nodes = self._make_nodes()
        self._stop_orphans()
        try:
            for index in range(len(self.nodes)):
                if self._start_node(index, first_start=True):
                    self._ours.add(index)
                self.nodes[index].keep_port()
                self._confine(index)
            self._form()
        except BaseException:
            self.stop()
            raise

    def _form(self) -> None:
        """Waits for the nodes to form the cluster; a node that cannot rejoin from its old data
        (`_rebuild_stale`) is rebuilt, and the wait starts again."""
        try:
            self.wait_formed(STALE_AFTER_S)
        except LocalServerError:
            rebuilt = self._rebuild_stale()
            if not rebuilt:
                self.wait_formed(START_TIMEOUT_S - STALE_AFTER_S)
                return
            self.rebuilt_note = f"rebuilt {', '.join(rebuilt)} (its data could not rejoin)"
            self.wait_formed()

    def _rebuild_stale(self) -> list[str]:
        """Rebuilds the nodes whose data cannot rejoin the cluster; their names (none: the
        engine has nothing to rebuild, or every node may yet join)."""
        return []

    def _stop_orphans(self) -> None:
        """Nodes left running by a dbscale process that is gone (killed before it stopped
        them) are stopped first, last node first, so the cluster starts as this process's."""
        reaped = []
        for index in reversed(range(len(self.nodes))):
            node = self.nodes[index]
            owner = dead_owner(node.run_dir) if node.running_pid() is not None else None
            if owner is not None:
                node.stop()
                reaped.append(self.node_name(index))
        if reaped:
            self.reaped_note = (f"stopped {', '.join(reversed(reaped))}, left running by a dbscale "
                                "process that ended without stopping them")  # fmt: skip

    def stop(self) -> None:
        """Stops the nodes this object started, in reverse order (the last one stopped can
        bootstrap next time); a cluster that already ran is left running."""
        problems = []
        for index in reversed(range(len(self.nodes))):
            if index not in self._ours:
                continue
            try:
                self.nodes[index].stop()
            except LocalServerError as exc:
                problems.append(exc)
            quota = self._quotas.pop(index, None)
            if quota is not None:
                quota.remove()
            memory = self._memory.pop(index, None)
            if memory is not None:
                memory.remove()
        self._ours.clear()
        if problems:
            raise problems[0]

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_formed(self, timeout_s: float = START_TIMEOUT_S) -> list[NodeState]:
        """Waits until every node is up and in the cluster; `LocalServerError` if not."""
        missing: str | None = None

        def formed() -> list[NodeState] | None:
            nonlocal missing
            states = self.states()
            missing = self._formed(states)
            return states if missing is None else None

        found = poll_until(formed, timeout_s, 0.5)
        if found is None:
            raise LocalServerError(
                f"the local {self.title} cluster {self.name} did not form within "
                f"{timeout_s:.0f} s: {missing}",
                f"see the node logs under {self.base_dir}",
            )
        return found

    # -- faults --------------------------------------------------------------------------------

    # Each fault action returns what it weakened beyond the node (None: nothing): the driver
    # records it with the step.

    def stop_node(self, index: int) -> str | None:
        """A clean shutdown of node `index`."""
        self.nodes[index].stop()
        return None

    def kill_node(self, index: int) -> str | None:
        """Node `index` dies at once: SIGKILL to every process of the server."""
        self.nodes[index].kill()
        return None

    def restart_node(self, index: int) -> str | None:
        """Starts node `index` again (it rejoins the cluster)."""
        if self._start_node(index, first_start=False):
            self._ours.add(index)
        self._confine(index)
        return None

    def heal(self) -> list[NodeState]:
        """Brings every node back into the cluster after fault steps (a down node is started
        again and rejoins) and waits until the cluster is whole."""
        for index, node in enumerate(self.nodes):
            if node.running_pid() is None:
                self.restart_node(index)
        return self.wait_formed()

    def promote(self, index: int) -> str | None:
        """Makes node `index` the primary (PostgreSQL); others refuse."""
        raise LocalServerError(f"a {self.title} cluster has no promotion: every node writes")

    def primary_index(self) -> int | None:
        """The node that takes writes, when only one does."""
        return None

    # -- CPU budgets ---------------------------------------------------------------------------

    def _confine(self, index: int) -> None:
        """Holds node `index` to the shape's CPUs and memory, when it has budgets."""
        pid = self.nodes[index].running_pid()
        if pid is not None and self.shape.memory_gib is not None:
            self._limit_memory(index, pid, self.shape.memory_gib)
        cpus = self.shape.vcpus
        if cpus is None or pid is None:
            return
        quota = self._quotas.get(index)
        if quota is None:
            made = make_cpu_quota(f"{self.name}-{self.node_name(index)}-{os.getpid()}", cpus)
            if isinstance(made, str):
                self.confinement_note = f"not enforced ({made})"
                return
            quota = self._quotas[index] = made
        quota.add(process_tree(pid) or [pid])
        self.confinement_note = quota.describe() + " per node, the nodes sharing one host"

    def _limit_memory(self, index: int, pid: int, memory_gib: float) -> None:
        cgroup = self._memory.get(index)
        if cgroup is None:
            name = f"{self.name}-{self.node_name(index)}-mem-{os.getpid()}"
            placement = make_memory_cgroup(name, int(memory_gib * 1024**3))
            if placement.cgroup is None:
                self.memory_note = f"memory not capped ({placement.reason})"
                return
            cgroup = self._memory[index] = placement.cgroup
        cgroup.add(process_tree(pid) or [pid])
        self.memory_note = f"{memory_gib:g} GiB per node ({cgroup.limit_file})"

    def quota_of(self, index: int) -> CpuQuota | None:
        return self._quotas.get(index)
