"""The enums the stages share: the wire and connection modes a run can choose, a target's
dialect and a workload's family. The command line builds its options from them before anything
heavier is imported, and the config models use them."""

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


class Dialect(StrEnum):
    """The wire protocol a target speaks (driver/mod.rs `Dialect`). MariaDB speaks MySQL's.
    Older files say `postgres` (targets.json) or `mariadb`: both are read as the same."""

    POSTGRESQL = "postgresql"
    MYSQL = "mysql"

    @classmethod
    def _missing_(cls, value: object) -> Dialect | None:
        aliases = {"postgres": cls.POSTGRESQL, "mariadb": cls.MYSQL}
        return aliases.get(str(value).lower())


class WorkloadFamily(StrEnum):
    """The kind of benchmark a workload is (`workload::Family`, read from the core's catalog):
    what its data, rules and figures are like. Code asks a workload's family, never its name."""

    TPCB = "tpcb"  # pgbench's TPC-B-like scripts
    SYSBENCH = "sysbench"  # sysbench's OLTP tests
    TPCC = "tpcc"  # TPC-C: warehouses, consistency conditions, tpmC
    SCRIPT = "script"  # pgbench script files
    YCSB = "ycsb"  # YCSB's core workloads: usertable, operation mixes, request distributions
    TPCH = "tpch"  # derived from TPC-H: dbgen's tables, the 22 queries as query streams
    CH = "ch"  # CH-benCHmark: TPC-C terminals and analytic query streams on TPC-C's tables
