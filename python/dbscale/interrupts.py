"""SIGTERM and SIGHUP (how `timeout`, systemd, CI runners and a closed terminal stop a job) are
handled as Ctrl-C is: the run in progress stops at its next transaction boundary and is recorded
as cancelled, the summary and report are written, and `--resume` finishes the study. The exit
code says which signal it was (128 + its number, as a shell reports a signal: 130 for Ctrl-C,
143 for SIGTERM, 129 for SIGHUP).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


@contextmanager
def handled() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP interrupt the main thread like Ctrl-C (which is
    noted too); the previous handlers come back after it (a test process keeps its own)."""
    _received.clear()
    previous = {sig: signal.signal(sig, _interrupt) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def interrupted() -> bool:
    """Whether a signal interrupted the block (Ctrl-C, SIGTERM or SIGHUP)."""
    return bool(_received)


def cause() -> str:
    """What interrupted: `Ctrl-C`, `SIGTERM` or `SIGHUP` (the last signal received)."""
    if not _received or _received[-1] == signal.SIGINT:
        return "Ctrl-C"
    return signal.Signals(_received[-1]).name


def exit_code() -> int:
    """128 + the signal's number (130 for Ctrl-C's SIGINT)."""
    return 128 + (_received[-1] if _received else signal.SIGINT)
