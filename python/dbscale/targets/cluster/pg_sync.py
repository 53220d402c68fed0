"""A private PostgreSQL primary with synchronous standbys on loopback: node 1 is a
`LocalPostgres` that takes replication connections and waits for `ANY 1` of its standbys at
each commit; nodes 2.. are copies made by `pg_basebackup`, streaming from it under their node
names (which `synchronous_standby_names` lists). Promotion (`pg_ctl promote`) makes a standby
the primary; the other standbys are then pointed at it and it waits for them at each commit,
as the old primary did. Promoted with no standby left, it commits asynchronously, and the
fault step says so (the run is flagged: not comparable with the scenario's other runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dbscale.errors import LocalServerError
from dbscale.targets.cluster.base import START_TIMEOUT_S, LocalCluster, NodeState
from dbscale.targets.local.instance import memory_settings
from dbscale.targets.local.postgres import ADMIN_USER, DEFAULT_SETTINGS, LocalPostgres
from dbscale.targets.local.server import LocalServer, SettingValue
from dbscale.targets.tls import make_certificates

_REPLICATION_HBA = """\
# Written by dbscale: the standbys stream over loopback.
local   replication  all  trust
host    replication  all  127.0.0.1/32  trust
"""
PRIMARY_SETTINGS: dict[str, SettingValue] = {
    "wal_level": "replica",
    "max_wal_senders": 10,
    "hot_standby": True,
    "synchronous_commit": "on",
    "shared_buffers": "128MB",
}


class PgStandby(LocalPostgres):
    """A standby: its data directory is a base backup of the primary, not an initdb."""

    def __init__(self, base_dir: Path, *, primary: LocalPostgres, app_name: str, **options: Any):
        super().__init__(base_dir, **options)
        self.primary = primary
        self.app_name = app_name

    def init(self) -> None:
        if self.is_initialized():
            return
        self._make_base_dir()
        self._run(
            [self.binaries.tool("pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.primary.port),
             "-U", ADMIN_USER, "-D", self.data_dir, "-R", "-X", "stream", "-c", "fast",
             "--no-sync"],
            what="pg_basebackup", as_server_user=True,
        )  # fmt: skip
        self.follow(self.primary)
        make_certificates(self.tls.ca_cert.parent)
        self._chown_tree()

    def follow(self, primary: LocalPostgres) -> None:
        follow(self, primary, self.app_name)


class PgSyncCluster(LocalCluster):
    engine = "postgresql-sync"
    title = "PostgreSQL (primary and synchronous standbys)"

    def _make_nodes(self) -> list[LocalServer[Any]]:
        count = self.shape.nodes
        # Synchronous replication is switched on once the standbys stream (`_require_sync`):
        # before that, the primary's own start-up writes would wait for them forever.
        sized = (
            memory_settings(self.shape.memory_gib, int(DEFAULT_SETTINGS["max_connections"]))
            if self.shape.memory_gib is not None
            else {}
        )
        settings = {
            **sized,
            **{k: v for k, v in self.shape.settings.items() if k != "synchronous_standby_names"},
        }
        primary = LocalPostgres(
            self.base_dir / self.node_name(0),
            settings={**PRIMARY_SETTINGS, **settings},
            start_timeout_s=START_TIMEOUT_S,
        )
        nodes: list[LocalServer[Any]] = [primary]
        for i in range(1, count):
            nodes.append(
                PgStandby(
                    self.base_dir / self.node_name(i),
                    primary=primary,
                    app_name=self.node_name(i),
                    settings={**PRIMARY_SETTINGS, **settings},
                    start_timeout_s=START_TIMEOUT_S,
                )
            )
        return nodes

    def _require_sync(self, primary_index: int) -> None:
        """The primary waits at each commit for `ANY 1` of the other nodes (or what the
        target's `synchronous_standby_names` says; '' for asynchronous replication)."""
        primary = self.nodes[primary_index]
        assert isinstance(primary, LocalPostgres)
        standbys = [self.node_name(i) for i in range(len(self.nodes)) if i != primary_index]
        default = f"ANY 1 ({', '.join(standbys)})" if standbys else ""
        names = str(self.shape.settings.get("synchronous_standby_names", default))
        primary.psql(f"ALTER SYSTEM SET synchronous_standby_names = '{names}'")
        primary.psql("SELECT pg_reload_conf()")

    def _start_node(self, index: int, *, first_start: bool) -> bool:
        node = self.nodes[index]
        if index == 0 and first_start and isinstance(node, LocalPostgres):
            node.init()
            hba = node.data_dir / "pg_hba.conf"
            if "replication" not in hba.read_text():
                hba.write_text(_REPLICATION_HBA + hba.read_text())
            # A primary stopped with synchronous replication on starts without it: its
            # start-up writes must not wait for standbys not yet up.
            if node.is_initialized() and node.running_pid() is None:
                auto = node.data_dir / "postgresql.auto.conf"
                lines = auto.read_text().splitlines() if auto.exists() else []
                kept = [ln for ln in lines if not ln.startswith("synchronous_standby_names")]
                if kept != lines:
                    auto.write_text("\n".join(kept) + "\n")
        started = node.start()
        if first_start and index == len(self.nodes) - 1:
            self._reconcile()
        return started

    def _reconcile(self) -> None:
        """Once every node runs: the standbys stream from the primary (a cluster restarted
        after a failover has a new primary, on a new port) and it waits for them."""
        primaries = [i for i, s in enumerate(self.states()) if s.role == "primary"]
        if len(primaries) != 1:
            names = ", ".join(self.node_name(i) for i in primaries) or "none"
            raise LocalServerError(
                f"the local {self.title} cluster {self.name} has {len(primaries)} primaries "
                f"({names}), not one",
                f"remove {self.base_dir} to start it afresh",
            )
        primary = self.nodes[primaries[0]]
        assert isinstance(primary, LocalPostgres)
        for index, node in enumerate(self.nodes):
            if index != primaries[0] and isinstance(node, LocalPostgres):
                follow(node, primary, self.node_name(index))
                node.psql("SELECT pg_reload_conf()")
        self._require_sync(primaries[0])

    def states(self) -> list[NodeState]:
        states = []
        for i, node in enumerate(self.nodes):
            name = self.node_name(i)
            if not isinstance(node, LocalPostgres) or node.running_pid() is None:
                states.append(NodeState(name, "", up=False, role="down"))
                continue
            try:
                recovery = node.psql("SELECT pg_is_in_recovery()") == "t"
                detail = ""
                if not recovery:
                    rows = node.psql(
                        "SELECT application_name || ' ' || state || ' ' || sync_state "
                        "FROM pg_stat_replication ORDER BY 1"
                    )
                    detail = "; ".join(rows.splitlines())
            except LocalServerError as exc:
                states.append(NodeState(name, node.url, False, "unreachable", exc.message))
                continue
            role = "standby" if recovery else "primary"
            states.append(NodeState(name, node.url, True, role, detail))
        return states

    def _formed(self, states: Sequence[NodeState]) -> str | None:
        primaries = [s for s in states if s.role == "primary"]
        if len(primaries) != 1:
            return f"{len(primaries)} primaries ({', '.join(f'{s.name} {s.role}' for s in states)})"
        streaming = primaries[0].detail.count(" streaming ")
        standbys = len(states) - 1
        if streaming < standbys:
            return f"{streaming} of {standbys} standbys streaming ({primaries[0].detail})"
        return None

    def _rebuild_stale(self) -> list[str]:
        """Standbys that do not stream from the primary after `STALE_AFTER_S` (their WAL is
        gone: the primary went on without them, past max_wal_size) get a fresh base backup."""
        current = self.primary_index()
        if current is None:
            return []
        primary = self.nodes[current]
        assert isinstance(primary, LocalPostgres)
        streaming = set(
            primary.psql(
                "SELECT application_name FROM pg_stat_replication "
                "WHERE state IN ('streaming', 'catchup')"
            ).splitlines()
        )
        rebuilt = []
        for index, node in enumerate(self.nodes):
            name = self.node_name(index)
            if index == current or name in streaming or not isinstance(node, LocalPostgres):
                continue
            node.destroy()
            fresh = PgStandby(
                node.base_dir, primary=primary, app_name=name, port=node.port,
                settings={**PRIMARY_SETTINGS, **self.shape.settings},
                start_timeout_s=START_TIMEOUT_S,
            )  # fmt: skip
            self.nodes[index] = fresh
            if fresh.start():
                self._ours.add(index)
            self._confine(index)
            rebuilt.append(name)
        return rebuilt

    def primary_index(self) -> int | None:
        for i, state in enumerate(self.states()):
            if state.role == "primary":
                return i
        return None

    def heal(self) -> list[NodeState]:
        """Every node back: a former primary another node replaced is rebuilt as a standby of
        the current primary (a fresh base backup, as a cluster manager re-attaches it), a
        stopped standby follows the current primary again, and the primary waits for `ANY 1`
        of its standbys, as node 1 did at the start."""
        current = self.primary_index()
        if current is None:  # a primary stopped (not replaced): it comes back as it was
            for index, node in enumerate(self.nodes):
                stopped = node.running_pid() is None
                if stopped and isinstance(node, LocalPostgres) and not _is_standby(node):
                    self.restart_node(index)
            current = self.primary_index()
        if current is None:
            raise LocalServerError(
                f"the local {self.title} cluster {self.name} has no running primary to heal from",
                "promote a standby in the fault steps, or start the primary again",
            )
        primary = self.nodes[current]
        assert isinstance(primary, LocalPostgres)
        for index, node in enumerate(self.nodes):
            if index == current or node.running_pid() is not None:
                continue
            assert isinstance(node, LocalPostgres)
            replaced = not _is_standby(node)
            if replaced:
                node.destroy()
                node = PgStandby(
                    node.base_dir, primary=primary, app_name=self.node_name(index),
                    port=node.port, settings={**PRIMARY_SETTINGS, **self.shape.settings},
                    start_timeout_s=START_TIMEOUT_S,
                )  # fmt: skip
                self.nodes[index] = node
            else:
                follow(node, primary, self.node_name(index))
            if node.start():
                self._ours.add(index)
            self._confine(index)
        self._require_sync(current)
        return self.wait_formed()

    def promote(self, index: int) -> str | None:
        """`pg_ctl promote` on node `index`; the other live standbys follow it, and it waits
        for them at each commit as the scenario's primary did (a cluster manager's synchronous
        mode), so what is measured after a failover has the durability measured before it. With
        no standby left it can only commit asynchronously: that is said, and the run flagged."""
        node = self.nodes[index]
        if not isinstance(node, LocalPostgres):
            raise LocalServerError(f"node {self.node_name(index)} is not a PostgreSQL server")
        node._run(
            [node.binaries.tool("pg_ctl"), "-D", node.data_dir, "-w", "-t", "60", "promote"],
            what="pg_ctl promote", as_server_user=True,
        )  # fmt: skip
        followers = []
        for i, other in enumerate(self.nodes):
            live = isinstance(other, LocalPostgres) and other.running_pid() is not None
            if i != index and live and isinstance(other, LocalPostgres):
                follow(other, node, self.node_name(i))
                other.psql("SELECT pg_reload_conf()")
                followers.append(self.node_name(i))
        if str(self.shape.settings.get("synchronous_standby_names", "x")) == "":
            return None  # the scenario replicates asynchronously anyway
        if followers:
            self._require_sync(index)
            return None
        return (f"{self.node_name(index)} commits asynchronously after its promotion: no standby "
                "was left to wait for; this run's durability is not the scenario's")  # fmt: skip


def _is_standby(node: LocalPostgres) -> bool:
    """Whether the node's data directory starts it as a standby."""
    return (node.data_dir / "standby.signal").exists()


def follow(node: LocalPostgres, primary: LocalPostgres, app_name: str) -> None:
    """`node` streams from `primary` under the name `synchronous_standby_names` lists
    (postgresql.auto.conf, read after the other settings); read at its next start or reload."""
    conninfo = f"host=127.0.0.1 port={primary.port} user={ADMIN_USER} application_name={app_name}"
    auto = node.data_dir / "postgresql.auto.conf"
    lines = auto.read_text().splitlines() if auto.exists() else []
    kept = [line for line in lines if not line.startswith("primary_conninfo")]
    kept.append(f"primary_conninfo = '{conninfo}'")
    auto.write_text("\n".join(kept) + "\n")
    node._chown(auto)
