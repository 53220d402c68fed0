"""A plan's `micro` section: which micro-benchmarks a study runs on each target's host (and on
the client), with what settings. The defaults are `dbscale micro`'s; recipe `cloud-report` sets
the Cloud Report's own (10 CPU runs, 2-minute fio jobs, 60 s of request/response, 180 s search
steps).

    micro:
      cpu: {repetitions: 10, seconds: 2}
      disk: {size_mib: 1024, runtime: 30s, jobs: [wr-iops-tpcc-fsync, rd-iops]}
      net: {seconds: 10, step: 2s}
      repeat: 1            # each micro-benchmark's runs per host; samples pool over them
      client: false        # also on the client (cpu, and disk with disk.client_dir)
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from dbscale.values import seconds_validator

MAX_MICRO_REPEAT = 100
CPU_REPETITIONS, CPU_SECONDS = 10, 2.0
DISK_SIZE_MIB, DISK_RUNTIME_S = 1024, 30.0
NET_SECONDS, NET_STEP_S, NET_BUFFER_MIB, NET_PORT = 10.0, 2.0, 16, 12865


_seconds = seconds_validator("duration", "30s, 2m or 500ms")

ShortSeconds = Annotated[  # a CPU run, a request/response period
    float, BeforeValidator(_seconds), Field(ge=0.01, le=3600, allow_inf_nan=False)
]
StepSeconds = Annotated[
    float, BeforeValidator(_seconds), Field(ge=0.5, le=3600, allow_inf_nan=False)
]
JobSeconds = Annotated[float, BeforeValidator(_seconds), Field(ge=1, le=3600, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MicroCpu(_Strict):
    """`dbscale micro cpu`: one thread then every CPU of the host (of the target's CPUs, for a
    local target), `repetitions` runs of `seconds` each."""

    repetitions: int = Field(default=CPU_REPETITIONS, ge=1, le=1000)
    seconds: ShortSeconds = CPU_SECONDS

    def estimate_s(self) -> float:
        return 2 * self.repetitions * self.seconds


class MicroDisk(_Strict):
    """`dbscale micro disk`: fio's jobs on a `size_mib` file, each `runtime` long, in the
    target's data directory (local targets) or its `host.disk_dir`; on the client in
    `client_dir`."""

    size_mib: int = Field(default=DISK_SIZE_MIB, ge=1, le=1 << 20)
    runtime: JobSeconds = DISK_RUNTIME_S
    jobs: list[str] | None = Field(default=None, min_length=1)
    client_dir: str | None = None

    @field_validator("jobs")
    @classmethod
    def _known_jobs(cls, value: list[str] | None) -> list[str] | None:
        from dbscale.micro.disk import JOBS

        unknown = [j for j in value or () if j not in JOBS]
        if unknown:
            raise ValueError(f"no fio job {', '.join(unknown)}; the jobs: {', '.join(JOBS)}")
        return value

    @property
    def job_names(self) -> list[str]:
        from dbscale.micro.disk import JOBS

        return list(self.jobs or JOBS)

    def estimate_s(self) -> float:
        return len(self.job_names) * (self.runtime + 1.0)


class MicroNet(_Strict):
    """`dbscale micro net` from the client to the target's host: request/response for
    `seconds`, the stream search (`step` per count) unless `streams` is given, then `seconds`
    of streams."""

    seconds: ShortSeconds = NET_SECONDS
    step: StepSeconds = NET_STEP_S
    streams: int | None = Field(default=None, ge=1, le=1024)
    buffer_mib: int = Field(default=NET_BUFFER_MIB, ge=1, le=1024)
    port: int = Field(default=NET_PORT, ge=1, le=65535)  # the server's port on a remote host

    def estimate_s(self) -> float:
        steps = 1 if self.streams is not None else 4  # a search ends after 4 steps at least
        return 2 * self.seconds + (0 if self.streams is not None else steps * self.step)


class MicroSettings(_Strict):
    """The micro-benchmarks of a study, run once per target host before its first database run
    (and on the client first, with `client: true`)."""

    cpu: MicroCpu | None = None
    disk: MicroDisk | None = None
    net: MicroNet | None = None
    repeat: int = Field(default=1, ge=1, le=MAX_MICRO_REPEAT)
    client: bool = False

    @model_validator(mode="after")
    def _something(self) -> MicroSettings:
        if self.cpu is None and self.disk is None and self.net is None:
            raise ValueError("name at least one of cpu, disk and net (`cpu: {}` for defaults)")
        return self

    def kinds(self) -> list[str]:
        return [k for k in ("cpu", "disk", "net") if getattr(self, k) is not None]

    def client_kinds(self) -> list[str]:
        """What runs on the client: cpu, and disk when it has a directory there."""
        if not self.client:
            return []
        kinds = ["cpu"] if self.cpu is not None else []
        if self.disk is not None and self.disk.client_dir is not None:
            kinds.append("disk")
        return kinds

    def estimate_s(self, kind: str) -> float:
        settings: MicroCpu | MicroDisk | MicroNet | None = getattr(self, kind)
        return settings.estimate_s() if settings is not None else 0.0
