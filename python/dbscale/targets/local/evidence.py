"""What a local target's record keeps of its private servers (targets/<name>.json `local` and
`pooler`): where the server lives, the CPUs and memory it was confined to and the proof of it,
the settings it was started with; the PgBouncer in front of it. Written with the fields they
have.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class _Evidence(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class MemoryLimit(_Evidence):
    """The memory budget and how (or whether) it was enforced."""

    memory_gib: int | float
    limit_bytes: int
    enforced_by: str | None = None
    note: str | None = None
    cgroup: str | None = None
    postmaster_cgroup: str | None = None
    processes_moved: int | None = None


class LocalEvidence(_Evidence):
    """A local server as started: its directory, port and first process, its shape."""

    dir: str
    port: int
    postmaster_pid: int
    vcpus: int | float | None = None
    cpus: str | None = None
    settings_from_memory: dict[str, JsonValue] = Field(default_factory=dict)
    settings: dict[str, JsonValue] = Field(default_factory=dict)
    processes: list[dict[str, JsonValue]] | None = None
    all_confined: bool | None = None
    memory: MemoryLimit | None = None


class PoolerFacts(_Evidence):
    """The private PgBouncer in front of a local PostgreSQL."""

    program: str
    version: str
    pool_mode: str
    port: int
    pool_size: int
    max_client_connections: int
    log: str
