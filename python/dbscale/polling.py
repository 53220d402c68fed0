"""Waiting for something outside dbscale to be ready (a server accepting connections, a cluster
formed, a process gone), with a deadline: the one loop every such wait uses. A base module: the
targets, the micro-benchmarks and the scale-out all wait this way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def poll_until(
    ready: Callable[[], T | None],
    timeout_s: float,
    interval_s: float = 0.1,
    *,
    growth: float = 1.0,
    max_interval_s: float = 2.0,
) -> T | None:
    """Calls `ready` until it gives something other than None or False (returned), or until
    `timeout_s` has passed (None). `ready` is always asked at least once, and once more at the
    deadline when the next pause would pass it; it may raise to stop the wait at once. The
    pause starts at `interval_s` and grows by `growth` up to `max_interval_s`."""
    deadline = time.monotonic() + timeout_s
    pause = interval_s
    while True:
        found = ready()
        if found is not None and found is not False:
            return found
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(pause, left))
        pause = min(pause * growth, max(max_interval_s, interval_s))
