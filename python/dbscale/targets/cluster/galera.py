"""A private MariaDB Galera cluster on loopback: every node a `LocalMariaDB` with the wsrep
settings that join it (ROW binlog, interleaved auto-increment locks, Galera's provider with a
listen address, IST receive address and SST port of its own). The first node bootstraps a new
cluster (`gcomm://`); the others join it and copy its data by rsync SST. A node answers once it
is Synced; the cluster is formed when every node sees all N.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbscale.errors import LocalServerError
from dbscale.targets.cluster.base import START_TIMEOUT_S, LocalCluster, NodeState
from dbscale.targets.local.instance import mariadb_memory_settings
from dbscale.targets.local.mariadb import LocalMariaDB
from dbscale.targets.local.server import LocalServer, SettingValue, free_port

PROVIDER_PATHS = (
    Path("/usr/lib/galera/libgalera_smm.so"),
    Path("/usr/lib/libgalera_smm.so"),
    Path("/usr/lib64/galera-4/libgalera_smm.so"),
    Path("/usr/lib/galera-4/libgalera_smm.so"),
)
# Galera's own needs, and a small footprint per node (three share the machine).
CLUSTER_SETTINGS: dict[str, SettingValue] = {
    "binlog_format": "ROW",
    "default_storage_engine": "InnoDB",
    "innodb_autoinc_lock_mode": 2,
    "innodb_buffer_pool_size": "128M",
    "innodb_log_file_size": "64M",
    "performance_schema": "OFF",
    "wsrep_on": "ON",
    "wsrep_cluster_name": "dbscale",
    "wsrep_sst_method": "rsync",
}


def galera_provider() -> Path:
    """The Galera library (`galera-4`), or `LocalServerError` saying how to install it."""
    for path in PROVIDER_PATHS:
        if path.is_file():
            return path
    raise LocalServerError(
        "the Galera provider (libgalera_smm.so) is not installed",
        "install it (as root: apt-get install galera-4 rsync), or run `make system-deps`",
    )


class GaleraNode(LocalMariaDB):
    """One node: its SQL port is found free at start like any private server's; its Galera
    ports were chosen with the cluster's."""

    def _write_cnf(self, port: int) -> None:
        """The server's options, then the SST script's: the copy runs over loopback in the
        clear (encrypting it needs stunnel, which the server's TLS files would ask for)."""
        super()._write_cnf(port)
        with self.cnf_file.open("a") as cnf:
            cnf.write("[sst]\nssl-mode=DISABLED\n")

    def is_synced(self) -> tuple[bool, str, int]:
        """(Synced?, its state comment, the cluster size it sees)."""
        out = self.sql(
            "SHOW GLOBAL STATUS WHERE Variable_name IN "
            "('wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_ready')"
        )
        status = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
        comment = status.get("wsrep_local_state_comment", "")
        size = int(status.get("wsrep_cluster_size", "0") or 0)
        return comment == "Synced" and status.get("wsrep_ready") == "ON", comment, size


class GaleraCluster(LocalCluster):
    engine = "mariadb-galera"
    title = "MariaDB Galera"

    def _make_nodes(self) -> list[LocalServer[Any]]:
        provider = galera_provider()
        if shutil.which("rsync") is None:
            raise LocalServerError(
                "rsync is not installed (Galera's joiners copy the data with it)",
                "install it (as root: apt-get install rsync), or run `make system-deps`",
            )
        count = self.shape.nodes
        gcomm = [free_port() for _ in range(count)]
        ist = [free_port() for _ in range(count)]
        sst = [free_port() for _ in range(count)]
        members = ",".join(f"127.0.0.1:{port}" for port in gcomm)
        nodes: list[LocalServer[Any]] = []
        for i in range(count):
            sized = (
                mariadb_memory_settings(self.shape.memory_gib)
                if self.shape.memory_gib is not None
                else {}
            )
            settings = {
                **CLUSTER_SETTINGS,
                **sized,
                **self.shape.settings,
                "wsrep_provider": str(provider),
                "wsrep_cluster_address": f"gcomm://{members}",
                "wsrep_node_name": self.node_name(i),
                "wsrep_node_address": f"127.0.0.1:{gcomm[i]}",
                "wsrep_provider_options": (
                    f"gmcast.listen_addr=tcp://127.0.0.1:{gcomm[i]};"
                    f"ist.recv_addr=127.0.0.1:{ist[i]};gcache.size=64M"
                ),
                "wsrep_sst_receive_address": f"127.0.0.1:{sst[i]}",
            }
            nodes.append(
                GaleraNode(
                    self.base_dir / self.node_name(i),
                    settings=settings,
                    start_timeout_s=START_TIMEOUT_S,
                )
            )
        return nodes

    def _start_node(self, index: int, *, first_start: bool) -> bool:
        node = self.nodes[index]
        assert isinstance(node, GaleraNode)
        address = str(node.settings["wsrep_cluster_address"])
        bootstrap = first_start and index == 0 and node.running_pid() is None
        if bootstrap:
            # A new cluster from this node's data: it must be the one allowed to bootstrap.
            node.settings["wsrep_cluster_address"] = "gcomm://"
            _allow_bootstrap(node.data_dir / "grastate.dat")
        started = False
        try:
            started = node.start()
        finally:
            node.settings["wsrep_cluster_address"] = address
            if bootstrap and started:  # the next start of this node joins the others
                node._write_cnf(node.port)
        return started

    def states(self) -> list[NodeState]:
        states = []
        for i, node in enumerate(self.nodes):
            name = self.node_name(i)
            if not isinstance(node, GaleraNode) or node.running_pid() is None:
                states.append(NodeState(name, _url(node), up=False, role="down"))
                continue
            try:
                synced, comment, size = node.is_synced()
            except LocalServerError as exc:
                states.append(NodeState(name, _url(node), False, "unreachable", exc.message))
                continue
            role = "synced" if synced else (comment.lower() or "joining")
            states.append(NodeState(name, node.url, True, role, f"cluster size {size}"))
        return states

    def _formed(self, states: Sequence[NodeState]) -> str | None:
        want = f"cluster size {len(self.nodes)}"
        missing = [
            f"{s.name} {s.role}{f' ({s.detail})' if s.detail else ''}"
            for s in states
            if s.role != "synced" or s.detail != want
        ]
        return ", ".join(missing) if missing else None

    def kill_node(self, index: int) -> None:
        """SIGKILL, then the pid file a killed mariadbd leaves behind goes too."""
        super().kill_node(index)
        node = self.nodes[index]
        if isinstance(node, GaleraNode):
            node.pid_file.unlink(missing_ok=True)


def _url(node: LocalServer[Any]) -> str:
    try:
        return node.url
    except LocalServerError:
        return ""


def _allow_bootstrap(grastate: Path) -> None:
    """Marks the node's saved state safe to bootstrap from (we stopped every node ourselves,
    so its data is the cluster's latest)."""
    try:
        text = grastate.read_text()
    except OSError:
        return
    grastate.write_text(re.sub(r"safe_to_bootstrap:\s*0", "safe_to_bootstrap: 1", text))
