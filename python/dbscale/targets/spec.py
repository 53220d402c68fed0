"""What a target is and what it costs: instance metadata (provider, region, vCPUs, memory,
storage, HA, engine version), prices with their date and source, lifecycle hooks and the settings
of a local server. `TargetEntry`, a plan's target, is a `TargetProfile` with a name and URLs.

A target whose `vcpus` (or `memory_gib`, `instance_type`) is a list is one instance in several
shapes: `targets/sizes.py` makes one target per shape.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    field_validator,
    model_validator,
)

from dbscale.modes import Dialect, Routing
from dbscale.redaction import redact_url
from dbscale.targets.url import EMBEDDED, LOCAL, LOCAL_CLUSTER, dialect_of, is_private_url
from dbscale.targets.variables import text_value
from dbscale.values import seconds_validator

CLUSTER_ENGINES = ("mariadb-galera", "postgresql-sync")
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$"  # target, workload and plan names
HOURS_PER_MONTH = 730.0  # the clouds' monthly pricing convention (8760 h / 12)


Seconds = Annotated[
    float,
    BeforeValidator(seconds_validator("timeout", "30s, 10m or 1h")),
    Field(gt=0, allow_inf_nan=False),
]
Money = Annotated[float, Field(ge=0, allow_inf_nan=False)]
SettingValue = str | int | float | bool
# CPUs: whole for a server (CPU sets), fractions for a local cluster's nodes (a quota).
Cpus = Annotated[int, Field(ge=1)] | Annotated[float, Field(gt=0, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Prices(_Strict):
    """List prices of the instance, as of `date`, from `source`. Compute is either a whole
    instance's hourly price or per-vCPU plus per-GiB rates (Cloud SQL custom tiers, GCE custom
    machines); `_reserved` is the 1-year commitment price. `ha_multiplier` scales compute and
    storage when `ha` is on (Cloud SQL HA bills both twice)."""

    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    date: date
    source: str = Field(min_length=1)
    compute_per_hour: Money | None = None
    compute_per_hour_reserved: Money | None = None
    vcpu_per_hour: Money | None = None
    vcpu_per_hour_reserved: Money | None = None
    gib_per_hour: Money | None = None
    gib_per_hour_reserved: Money | None = None
    storage_per_gb_month: Money | None = None
    ha_multiplier: float = Field(default=1.0, ge=1.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _one_compute_form(self) -> Prices:
        whole = self.compute_per_hour is not None or self.compute_per_hour_reserved is not None
        rates = any(
            v is not None
            for v in (self.vcpu_per_hour, self.vcpu_per_hour_reserved, self.gib_per_hour,
                      self.gib_per_hour_reserved)
        )  # fmt: skip
        if whole and rates:
            raise ValueError("give compute_per_hour or vcpu_per_hour/gib_per_hour rates, not both")
        if not whole and not rates and self.storage_per_gb_month is None:
            raise ValueError("give compute_per_hour, vcpu_per_hour or storage_per_gb_month")
        return self


class HookCommand(_Strict):
    """A shell command (`sh -c`), with `{field}` variables of its target filled in."""

    run: str = Field(min_length=1)
    timeout: Seconds | None = None  # default: the target's `hooks.timeout`


def _command(value: Any) -> Any:
    return {"run": value} if isinstance(value, str) else value


Hook = Annotated[HookCommand, BeforeValidator(_command)]


class Hooks(_Strict):
    """`setup` before the target is used, `ready` once it should be up (dbscale then waits up
    to `connect_timeout` until it accepts connections), `teardown` when the study leaves it."""

    setup: Hook | None = None
    ready: Hook | None = None
    teardown: Hook | None = None
    timeout: Seconds = 600.0
    connect_timeout: Seconds = 300.0

    def get(self, name: str) -> HookCommand | None:
        hook: HookCommand | None = getattr(self, name)
        return hook


# Directories a local server must never be put in (or under, for the trees), and the names a
# directory dbscale made holds (a server's data, run and TLS directories, a cluster's nodes).
SYSTEM_TREES = frozenset({"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/dev",
                          "/proc", "/sys", "/run", "/var/lib", "/var/log"})  # fmt: skip
SYSTEM_ROOTS = frozenset({"/", "/var", "/var/tmp", "/tmp", "/home", "/root", "/opt", "/srv",
                          "/mnt", "/media"})  # fmt: skip
DBSCALE_LAYOUT = frozenset({"data", "run", "tls", "n1", "postgres.log", "mariadb.log"})


class LocalSettings(_Strict):
    """A server dbscale starts (`url: local`): its directory (default: a cache directory named
    after the target's group), postgresql.conf settings, and which CPUs (default: the first
    `vcpus` of those dbscale may use)."""

    engine: Literal["postgresql", "mariadb", "mariadb-galera", "postgresql-sync"] = "postgresql"
    dir: str | None = None
    settings: dict[str, SettingValue] = Field(default_factory=dict)
    cpus: str | None = Field(default=None, pattern=r"^\d+(-\d+)?(,\d+(-\d+)?)*$")

    @field_validator("dir")
    @classmethod
    def _a_directory_of_its_own(cls, value: str | None) -> str | None:
        """dbscale initializes, owns (chowns) and may remove what is in the directory: never
        a system directory, nor one that holds files it did not make."""
        if value is None or ("/" not in value and "~" not in value):
            return value  # a bare name: a directory of its own under dbscale's home
        path = Path(value).expanduser().absolute()
        resolved = path.resolve()
        for system in (resolved, *resolved.parents):
            if str(system) in SYSTEM_TREES:
                raise ValueError(f"{value} is a system directory (under {system}); give a "
                                 "directory of its own, e.g. /var/tmp/dbscale-NAME")  # fmt: skip
        if str(resolved) in SYSTEM_ROOTS:
            raise ValueError(f"{value} is a system directory; give one of its own inside it, "
                             "e.g. /var/tmp/dbscale-NAME")  # fmt: skip
        if path.exists() and not path.is_dir():
            raise ValueError(f"{value} is a file, not a directory")
        if path.is_dir():
            found = {p.name for p in path.iterdir()}
            if found and not found & DBSCALE_LAYOUT:
                raise ValueError(f"{value} holds other files ({', '.join(sorted(found)[:3])}, "
                                 "...); give an empty directory or one dbscale made")  # fmt: skip
        return value


class HostAccess(_Strict):
    """How a study reaches the host a remote target runs on, for its micro-benchmarks:
    `command` runs dbscale there (`ssh db1 dbscale`; dbscale appends `micro cpu --json ...`),
    `address` is where the client reaches that host's `micro net` server (default: the host of
    the target's URL), `disk_dir` an empty directory on the database's disk for fio. A target on
    this machine needs no `command` (and `disk_dir` defaults to one beside its data)."""

    command: str | None = Field(default=None, min_length=1)
    address: str | None = None
    disk_dir: str | None = None


class TargetProfile(BaseModel):
    """The target fields of issue 6, mixed into `TargetEntry`: how to log in without the
    password in the plan, what the instance is, what it costs, and its lifecycle."""

    password_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    password_file: str | None = None
    group: str | None = None  # targets of one group are one server in turn (sizes of a sweep)
    provider: str | None = None  # gcp, aws, azure, local, ...
    service: str | None = None  # cloudsql, rds, compute, ...
    region: str | None = None
    zone: str | None = None
    instance_type: str | list[str] | None = None  # may use {vcpus}, {memory_mb}, ...
    # A cluster's: per node (its `nodes` say how many).
    vcpus: Cpus | list[Cpus] | None = None
    memory_gib: Annotated[float, Field(gt=0)] | list[Annotated[float, Field(gt=0)]] | None = None
    memory_gib_per_vcpu: float | None = Field(default=None, gt=0)
    storage_type: str | None = None  # pd-ssd, gp3, ...
    storage_gb: float | None = Field(default=None, gt=0)
    ha: bool = False
    engine_version: str | None = None
    prices: Prices | None = None
    hooks: Hooks | None = None
    local: LocalSettings | None = None
    host: HostAccess | None = None  # micro-benchmarks on a remote target's host

    @model_validator(mode="after")
    def _consistent(self) -> TargetProfile:
        if self.password_env and self.password_file:
            raise ValueError("give password_env or password_file, not both")
        if self.memory_gib is not None and self.memory_gib_per_vcpu is not None:
            raise ValueError("give memory_gib or memory_gib_per_vcpu, not both")
        if self.memory_gib_per_vcpu is not None and self.vcpus is None:
            raise ValueError("memory_gib_per_vcpu needs vcpus")
        lengths = {len(v) for v in self._size_lists().values()}
        if len(lengths) > 1:
            raise ValueError(
                f"vcpus, memory_gib and instance_type lists differ in length: {sorted(lengths)}"
            )
        if any(n == 0 for n in lengths):
            raise ValueError("a size list is empty")
        url = str(getattr(self, "url", ""))
        if self.local is not None and not is_private_url(url):
            raise ValueError("`local` settings apply to `url: local` (or embedded) targets only")
        cluster = url.strip().lower() == LOCAL_CLUSTER
        engine = self.local.engine if self.local is not None else None
        if cluster != (engine in CLUSTER_ENGINES):
            raise ValueError(
                "`url: local-cluster` takes `local.engine: mariadb-galera` or "
                "`postgresql-sync`, and those engines need `url: local-cluster`"
            )
        vcpus = self.vcpus if isinstance(self.vcpus, list) else [self.vcpus]
        if not cluster and any(isinstance(v, float) for v in vcpus):
            raise ValueError("fractional vcpus are for a local cluster's nodes (a CPU quota)")
        return self

    def _size_lists(self) -> dict[str, list[Any]]:
        return {
            name: value
            for name in ("vcpus", "memory_gib", "instance_type", "nodes")
            if isinstance(value := getattr(self, name, None), list)
            and (name != "nodes" or all(isinstance(n, int) for n in value))
        }

    # -- one size (after expand_sizes) --------------------------------------------------------

    @property
    def vcpu_count(self) -> int | float | None:
        """The target's vCPUs: a cluster's over all its nodes."""
        assert not isinstance(self.vcpus, list), "expand_sizes first"
        per_node = self.vcpus
        nodes = self.node_count
        if nodes <= 1:
            return per_node
        explicit = getattr(self, "nodes", None)
        if isinstance(explicit, list) and all(
            isinstance(n, NodeEntry) and n.vcpus is not None for n in explicit
        ):
            total: int | float = sum(n.vcpus or 0 for n in explicit if isinstance(n, NodeEntry))
            return total
        return per_node * nodes if per_node is not None else None

    @property
    def node_vcpus(self) -> int | float | None:
        """vCPUs of one node (of the only node, for a single server): what TPC-C sizing
        multiplies, as the Cloud Report sized by one node's vCPUs."""
        assert not isinstance(self.vcpus, list), "expand_sizes first"
        return self.vcpus

    @property
    def node_count(self) -> int:
        """Database nodes: a local cluster's `nodes`, a remote cluster's node list or URLs."""
        nodes = getattr(self, "nodes", None)
        if isinstance(nodes, int):
            return nodes
        if isinstance(nodes, list):
            return len(nodes)
        return 1 + len(getattr(self, "more_urls", []) or [])

    @property
    def memory(self) -> float | None:
        """GiB: `memory_gib`, or `memory_gib_per_vcpu` x vcpus."""
        assert not isinstance(self.memory_gib, list), "expand_sizes first"
        if self.memory_gib is not None:
            return self.memory_gib
        if self.memory_gib_per_vcpu is not None and self.vcpu_count is not None:
            return self.memory_gib_per_vcpu * self.vcpu_count
        return None

    @property
    def is_local(self) -> bool:
        return is_private_url(str(getattr(self, "url", "")))

    @property
    def dialect(self) -> Dialect:
        """What the target speaks: a local server's engine's, else its URL's."""
        if self.local is not None:
            return Dialect.MYSQL if self.local.engine.startswith("mariadb") else Dialect.POSTGRESQL
        return dialect_of(str(getattr(self, "url", "")))

    @property
    def exclusive_group(self) -> str | None:
        """Targets that are one server in turn: a study leaves one before entering the next.
        Its `group`, else the directory of a local server that others may share."""
        if self.group is not None:
            return self.group
        url = str(getattr(self, "url", "")).strip().lower()
        if self.local is not None and self.local.dir is not None:
            return f"local:{self.local.dir}"
        return f"local:{EMBEDDED}" if url == EMBEDDED else None


class NodeEntry(_Strict):
    """One node of a cluster someone else runs: its URL, and what the report and the per-vCPU
    figures need to know of it."""

    url: str = Field(min_length=1)
    vcpus: Cpus | None = None
    region: str | None = None
    zone: str | None = None


def _nodes_as_urls(data: Any) -> Any:
    """`nodes:` as a list of URLs (or node entries) gives `url` and `more_urls`."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        return data
    nodes = data["nodes"]
    if not nodes or not all(isinstance(n, str | dict) for n in nodes):
        return data
    if all(isinstance(n, int) for n in nodes):
        return data
    entries = [{"url": n} if isinstance(n, str) else n for n in nodes]
    urls = [e.get("url") for e in entries]
    if "url" in data or data.get("more_urls"):
        raise ValueError("give the nodes' URLs in `nodes:` or as url/more_urls, not both")
    return {**data, "nodes": entries, "url": urls[0], "more_urls": urls[1:]}


class TargetEntry(_Strict, TargetProfile):
    """A database to benchmark. `url` is a postgresql:// (or mysql://) URL, libpq key=value,
    `embedded`, or `local` (a server dbscale starts in the target's shape). The other URLs are
    other ways into the same server. Instance facts, prices, hooks and local settings come from
    `TargetProfile` (above, docs/targets.md)."""

    name: str = Field(pattern=NAME_PATTERN)
    url: str = Field(min_length=1)
    # Other nodes of the same database (a cluster): `routing` says how clients use them.
    more_urls: list[str] = Field(default_factory=list)
    # A cluster: its nodes (URLs or node entries), or for `url: local-cluster` how many.
    nodes: (
        Annotated[int, Field(ge=1, le=9)]
        | list[Annotated[int, Field(ge=1, le=9)]]
        | list[NodeEntry]
        | None
    ) = None
    routing: Routing | None = None
    socket_dir: str | None = None  # transport unix: the host becomes this directory
    socket_url: str | None = None  # transport unix: this URL as written
    pooled_url: str | None = None  # pooling on: through this pooler (e.g. PgBouncer)
    # A local PostgreSQL target without pooled_url: a private PgBouncer dbscale starts in front
    # of it for the pooling: on points (the planner sets it when there are any).
    pooler: Literal["pgbouncer"] | None = None

    _nodes_first = model_validator(mode="before")(_nodes_as_urls)

    @property
    def is_local_cluster(self) -> bool:
        return self.url.strip().lower() == LOCAL_CLUSTER

    def redacted(self) -> TargetEntry:
        """The target with no password in any of its URLs (url, more_urls, each node's,
        socket_url, pooled_url): what plan.json stores."""
        nodes: object = self.nodes
        if isinstance(self.nodes, list):
            nodes = [
                n.model_copy(update={"url": redact_url(n.url)}) if isinstance(n, NodeEntry) else n
                for n in self.nodes
            ]
        return self.model_copy(update={
            "url": redact_url(self.url),
            "more_urls": [redact_url(u) for u in self.more_urls],
            "nodes": nodes,
            **{name: redact_url(url) for name in ("socket_url", "pooled_url")
               if isinstance(url := getattr(self, name), str)},
        })  # fmt: skip

    @model_validator(mode="after")
    def _cluster_nodes(self) -> TargetEntry:
        counted = isinstance(self.nodes, int) or (
            isinstance(self.nodes, list) and all(isinstance(n, int) for n in self.nodes)
        )
        if counted and not self.is_local_cluster:
            raise ValueError("`nodes: N` is for `url: local-cluster`; list a cluster's node URLs")
        return self

    @property
    def pools_locally(self) -> bool:
        """A local PostgreSQL target: dbscale can start a private PgBouncer in front of it."""
        return self.is_local and (self.local is None or self.local.engine == "postgresql")

    @model_validator(mode="after")
    def _pooler_is_local(self) -> TargetEntry:
        if self.pooler is not None and not self.pools_locally:
            raise ValueError(
                "pooler: pgbouncer starts a private PgBouncer in front of a local PostgreSQL "
                "target; give another server's pooler as pooled_url"
            )
        return self


class TargetInfo(BaseModel):
    """The instance facts stored with each run (`target_info`) and in targets/<name>.json:
    what the cost and per-vCPU figures need. Tolerant: facts another version wrote are kept."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    group: str | None = None
    kind: str | None = None  # local | url
    provider: str | None = None
    service: str | None = None
    region: str | None = None
    zone: str | None = None
    instance_type: str | None = None
    vcpus: int | float | None = None  # a cluster's: over all its nodes
    nodes: int | None = None  # a cluster's database nodes
    vcpus_per_node: int | float | None = None
    memory_gib: int | float | None = None
    storage_type: str | None = None
    storage_gb: int | float | None = None
    ha: bool | None = None
    engine_version: str | None = None

    def record(self) -> dict[str, JsonValue]:
        """As runs.jsonl and micro.jsonl keep it: the facts that are known."""
        return self.model_dump(mode="json", exclude_none=True)


def target_info(target: TargetProfile) -> TargetInfo:
    """The target's instance facts."""
    return TargetInfo(
        name=getattr(target, "name", None),
        group=target.group,
        kind="local" if target.is_local else "url",
        provider=target.provider,
        service=target.service,
        region=target.region,
        zone=target.zone,
        instance_type=target.instance_type,
        vcpus=target.vcpu_count,
        nodes=target.node_count if target.node_count > 1 else None,
        vcpus_per_node=target.vcpus if target.node_count > 1 else None,
        memory_gib=target.memory,
        storage_type=target.storage_type,
        storage_gb=target.storage_gb,
        ha=target.ha,
        engine_version=target.engine_version,
    )


def describe_target(target: TargetProfile) -> str:
    """One line for the console: where it is and, when known, its shape."""
    url = str(getattr(target, "url", ""))
    where = redact_url(url)
    if url.strip().lower() == LOCAL:
        where = "local PostgreSQL (started by dbscale)"
    elif url.strip().lower() == EMBEDDED:
        where = "embedded PostgreSQL"
    elif url.strip().lower() == LOCAL_CLUSTER:
        engine = target.local.engine if target.local is not None else "cluster"
        count = target.node_count
        nodes = f"{count} node{'s' if count != 1 else ''}"
        where = f"local {engine} cluster of {nodes} (started by dbscale)"
    elif target.node_count > 1:
        where = f"{where} and {target.node_count - 1} more node(s)"
    shape = [target.instance_type if isinstance(target.instance_type, str) else None]
    if target.vcpu_count is not None:
        shape.append(f"{target.vcpu_count} vCPU{'s' if target.vcpu_count > 1 else ''}")
    if target.memory is not None:
        shape.append(f"{text_value(round(target.memory, 2))} GiB")
    details = ", ".join(s for s in shape if s)
    return f"{where}, {details}" if details else where
