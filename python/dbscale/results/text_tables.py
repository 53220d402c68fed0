"""The one shape of every table dbscale prints on a terminal: a title on the left, a rule under
the header, text columns on the left and numbers on the right."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich import box
from rich.table import Table


def text_table(
    columns: Sequence[str], *, left: Collection[str] = (), title: str | None = None
) -> Table:
    """An empty table with `columns`; those in `left` are text (left-aligned), the rest numbers."""
    table = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False
    )
    for name in columns:
        table.add_column(name, justify="left" if name in left else "right")
    return table
