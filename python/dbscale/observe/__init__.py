"""Observation: what the machine is, what it and the server did during each run, and what limited
throughput. `StudyObserver` is the runner's entry point; docs/observe.md describes the record.
"""

from __future__ import annotations

from dbscale.observe.observer import ObserveOptions, RunObserver
from dbscale.observe.watch import RunWatch, StudyObserver

__all__ = [
    "ObserveOptions",
    "RunObserver",
    "RunWatch",
    "StudyObserver",
]
