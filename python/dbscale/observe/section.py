"""The `observe` section of a run record (docs/observe.md), typed: what the observer saw of the
client host, the server and its sessions, and the verdict on what limited the run. The observer
builds it; results/record.py keeps it in each record. Tolerant like the record: a field another
version wrote is kept as it was.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ObservedServer(_Part):
    """The server as observed: its dialect, whether it ran on this host, the CPUs it may use,
    its version and settings; statistics deltas and more are kept as written."""

    dialect: str | None = None
    local: bool | None = None
    vcpus: int | None = None
    version: str | None = None
    settings: dict[str, JsonValue] | None = None


class WaitsRecord(_Part):
    """The sampled sessions' states and wait events (`observe/waits.py`)."""

    samples: int = 0
    interval_ms: float | None = None
    sessions_mean: float | None = None
    active_mean: float | None = None
    states: dict[str, int] = Field(default_factory=dict)
    events: dict[str, int | float] = Field(default_factory=dict)
    classes: dict[str, float] = Field(default_factory=dict)


class Finding(_Part):
    verdict: str = ""
    evidence: str = ""


class LimitedBy(_Part):
    """The observer's verdict on what limited the run (`observe/verdict.py`)."""

    verdict: str = ""
    summary: str = ""
    evidence: str = ""
    client_bound: bool = False
    warning: str | None = None
    hint: str | None = None
    host_warning: str | None = None  # other processes took a material share of the host's CPU
    also: list[Finding] = Field(default_factory=list)


class ResourceTable(_Part):
    """Per-second resource use: `columns` name the values of each row; `mean` over the window."""

    interval_s: float = 1.0
    columns: list[str] = Field(default_factory=list)
    rows: list[list[float | None]] = Field(default_factory=list)
    mean: dict[str, float] = Field(default_factory=dict)


class ObserveSection(_Part):
    """What `dbscale.observe` saw during the run (docs/observe.md)."""

    version: int = 1
    host: dict[str, JsonValue] = Field(default_factory=dict)  # short_facts of the client host
    window_s: float | None = None
    resources: ResourceTable | None = None
    server: ObservedServer = Field(default_factory=ObservedServer)
    waits: WaitsRecord | None = None
    overhead: dict[str, JsonValue] = Field(default_factory=dict)
    limited_by: LimitedBy | None = None
    notes: list[str] = Field(default_factory=list)
