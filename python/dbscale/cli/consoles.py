"""The two consoles every command writes to: data on stdout, messages on stderr."""

from __future__ import annotations

from rich.console import Console


def data_console() -> Console:
    """Figures and tables, on stdout."""
    console = Console(highlight=False)
    if not console.is_terminal:
        # Files and pipes get whole lines rather than an 80-column wrap.
        console = Console(highlight=False, width=max(console.width, 120))
    return console


def message_console() -> Console:
    """Progress, notes, warnings and errors, on stderr."""
    return Console(stderr=True, highlight=False)
