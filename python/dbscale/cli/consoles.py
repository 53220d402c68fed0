"""The two consoles every command writes to: data on stdout, messages on stderr."""

from __future__ import annotations

import os

from rich.console import Console

# Columns of output that goes to a file or a pipe (a terminal's own width is used as it is).
PIPE_WIDTH = 200


def data_console() -> Console:
    """Figures and tables, on stdout."""
    return _console(stderr=False)


def message_console() -> Console:
    """Progress, notes, warnings and errors, on stderr."""
    return _console(stderr=True)


def _console(*, stderr: bool) -> Console:
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        # Files and pipes get whole lines and whole table cells rather than an 80-column wrap:
        # a table takes only the width it needs, up to this. COLUMNS, when set, is obeyed.
        console = Console(stderr=stderr, highlight=False, width=max(console.width, PIPE_WIDTH))
    return console
