"""The one shape of every table dbscale prints on a terminal: a title on the left, a rule under
the header, text columns on the left and numbers on the right. Nothing is cut short with an
ellipsis and nothing runs past the terminal's edge: each column gets at least its longest word
(up to 32 characters) and the rest of the width goes to the columns that want more, in proportion;
a cell then wraps, at the commas of a point key (`clients=2, connect=persistent, tls=require`)
and at spaces, or, where a word is wider than its column, anywhere."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

LONGEST_KEPT_WORD = 32
CELL_GAP = 3  # padding (0, 1) on both sides of the divider between columns (a space in SIMPLE_HEAD)
EDGES = 2  # SIMPLE_HEAD's left and right edge, drawn as spaces


def breakable(text: str) -> str:
    """`a=1,b=2` as `a=1, b=2`, so a narrow column wraps between the values (text that already
    has spaces is left as it is)."""
    return text if " " in text else text.replace(",", ", ")


def _lines_of(cell: object) -> list[str]:
    return str(cell).splitlines() or [""]


def fit_widths(
    wanted: Sequence[int], least: Sequence[int], room: int, text: Sequence[bool]
) -> list[int]:
    """Column widths that add up to at most `room`: each at least its `least`, the rest shared
    in proportion to what each still wants. When even the least widths do not fit, the text
    columns (`text`) give up width first, numbers only when nothing else is left."""
    if sum(wanted) <= room:
        return list(wanted)
    if sum(least) > room:
        fixed = sum(m for m, t in zip(least, text, strict=True) if not t)
        flexible = sum(m for m, t in zip(least, text, strict=True) if t)
        if flexible and room - fixed >= sum(text):
            scale = (room - fixed) / flexible
            return [max(1, int(m * scale)) if t else m for m, t in zip(least, text, strict=True)]
        scale = room / max(sum(least), 1)
        return [max(1, int(m * scale)) for m in least]
    spare = room - sum(least)
    extra = [w - m for w, m in zip(wanted, least, strict=True)]
    total_extra = max(sum(extra), 1)
    return [m + (e * spare) // total_extra for m, e in zip(least, extra, strict=True)]


class TextTable(Table):
    """A rich table that lays its columns out itself (see the module's doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cells: list[list[str]] = []

    def add_row(self, *renderables: Any, **options: Any) -> None:
        cells = [
            breakable(cell) if isinstance(cell, str) and column.justify == "left" else cell
            for cell, column in zip(renderables, self.columns, strict=False)
        ]
        cells += list(renderables[len(cells) :])
        self._cells.append([str(c) for c in cells])
        super().add_row(*cells, **options)

    def _column_lines(self, index: int) -> list[str]:
        return [line for row in self._cells if index < len(row) for line in _lines_of(row[index])]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wanted, least = [], []
        for index, column in enumerate(self.columns):
            header = _lines_of(column.header)
            lines = self._column_lines(index)
            wanted.append(max(len(line) for line in header + lines))
            header_word = max((len(w) for line in header for w in line.split()), default=1)
            words = [len(w) for line in lines for w in line.split()]
            if column.justify == "right":  # a number is never split (a value and its interval
                least.append(max([header_word, *words]))  # may go on two lines)
            else:
                least.append(min(max([header_word, *words]), LONGEST_KEPT_WORD))
        room = options.max_width - CELL_GAP * (len(self.columns) - 1) - EDGES
        text = [column.justify == "left" for column in self.columns]
        widths = fit_widths(wanted, least, room, text)
        for column, width in zip(self.columns, widths, strict=True):
            column.width = width
        yield from super().__rich_console__(console, options)


def text_table(
    columns: Sequence[str], *, left: Collection[str] = (), title: str | None = None
) -> Table:
    """An empty table with `columns`; those in `left` are text (left-aligned), the rest numbers."""
    table = TextTable(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False
    )
    for name in columns:
        table.add_column(name, justify="left" if name in left else "right", overflow="fold")
    return table
