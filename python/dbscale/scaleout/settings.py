"""A plan's `scale_out` section (or `--workers`, `--ray`, `--workers-per-node`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_WORKERS = 1024


class ScaleOut(BaseModel):
    """A plan's `scale_out` (or `--workers`, `--ray`, `--workers-per-node`): `workers` load
    generators, on the Ray cluster at `ray` (one per node, or `per_node` packed), else local
    processes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workers: int = Field(ge=1, le=MAX_WORKERS)
    ray: str | None = Field(default=None, min_length=1)
    per_node: int = Field(default=1, ge=1, le=MAX_WORKERS)
