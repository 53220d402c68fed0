"""Per-second rows as one compact table (`ResourceTable`: `columns`, `rows` of values, `mean`),
values rounded by unit (cores to 1/1000, percentages to 1/10, rates to integers), network columns
of interfaces that carried nothing left out. `pandas.DataFrame(rows, columns=columns)` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dbscale.observe.resources import Row
from dbscale.observe.section import ResourceTable

FIRST_COLUMNS = ("t_s", "interval_s")


def round_value(name: str, value: float) -> float | int:
    if name.endswith(("_per_s", "_bytes", "_processes", "_threads", "procs_running")):
        return round(value)
    if name.endswith(("_pct", "_mhz", "_mhz_mean", "_mhz_min", "_mhz_max")):
        return round(value, 1)
    return round(value, 3)


def _quiet_interfaces(rows: Sequence[Mapping[str, float]]) -> set[str]:
    """Interfaces (`net.<name>.`) that moved no bytes in any row."""
    traffic: dict[str, float] = {}
    for row in rows:
        for key, value in row.items():
            if key.startswith("net."):
                name = key.rsplit(".", 1)[0]
                traffic[name] = traffic.get(name, 0.0) + value
    return {name for name, total in traffic.items() if total == 0}


def _columns(rows: Sequence[Mapping[str, float]]) -> list[str]:
    quiet = _quiet_interfaces(rows)
    names: set[str] = set()
    for row in rows:
        names.update(k for k in row if not (k.startswith("net.") and k.rsplit(".", 1)[0] in quiet))
    rest = sorted(names - set(FIRST_COLUMNS), key=lambda k: (k.startswith("net."), k))
    return [c for c in FIRST_COLUMNS if c in names or c == "t_s"] + rest


def column_table(rows: Sequence[tuple[float, Row]], interval_s: float = 1.0) -> ResourceTable:
    """Rows stamped with their end time (seconds into the measured window), and their means."""
    stamped = [{"t_s": t, **row} for t, row in rows]
    columns = _columns(stamped)
    return ResourceTable(
        interval_s=interval_s,
        columns=columns,
        rows=[
            [None if c not in row else round_value(c, row[c]) for c in columns] for row in stamped
        ],
        mean=window_means([row for _, row in rows]),
    )


def window_means(rows: Sequence[Row]) -> dict[str, float | int]:
    """Each column's mean over the window, weighted by each row's interval."""
    if not rows:
        return {}
    columns = [c for c in _columns(rows) if c not in FIRST_COLUMNS]
    means: dict[str, float | int] = {}
    for column in columns:
        weighted = total = 0.0
        for row in rows:
            if column in row:
                weight = row.get("interval_s", 1.0)
                weighted += row[column] * weight
                total += weight
        if total > 0:
            means[column] = round_value(column, weighted / total)
    return means
