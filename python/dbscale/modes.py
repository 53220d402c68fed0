"""The wire and connection modes a run can choose: shared by the command line, which must build
its options before anything heavier is imported, and the config models."""

from __future__ import annotations

from enum import StrEnum


class QueryProtocol(StrEnum):
    """How statements travel on the wire (pgbench `-M`)."""

    SIMPLE = "simple"
    EXTENDED = "extended"
    PREPARED = "prepared"


class ConnectMode(StrEnum):
    """One connection per client, or one per transaction (pgbench `-C`)."""

    PERSISTENT = "persistent"
    PER_TRANSACTION = "per-transaction"


class TlsMode(StrEnum):
    """libpq's `sslmode` values."""

    DISABLE = "disable"
    PREFER = "prefer"
    REQUIRE = "require"
    VERIFY_CA = "verify-ca"
    VERIFY_FULL = "verify-full"


class Routing(StrEnum):
    """How a cluster target's clients use its nodes (config.rs `Routing`)."""

    FIRST = "first"  # the first node, in order, that takes the connection (libpq's host list)
    ROUND_ROBIN = "round-robin"  # client i on node i mod N
    AFFINITY = "affinity"  # by the client's data: a TPC-C terminal's warehouse w on w mod N
    PRIMARY = "primary"  # the node that takes writes, found again after a failover
    PREFER_STANDBY = "prefer-standby"  # standbys, the primary when none will do
    STANDBY = "standby"  # standbys only
