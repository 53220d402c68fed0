"""A rank table as the console shows it, and as CSV (one row per configuration)."""

from __future__ import annotations

import csv
import io
from collections import Counter

from rich.console import Console

from dbscale.ranking.table import RankTable
from dbscale.results.text_tables import text_table

CSV_COLUMNS = ("rank", "rank_low", "rank_high", "tie_group", "dead_heat", "configuration", "n",
               "median", "ci_low", "ci_high", "ci_method", "mean", "cv_pct", "min", "max",
               "price_per_unit", "studies")  # fmt: skip


def number(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def rank_words(low: int | None, high: int | None, rank: int | None) -> str:
    if rank is None:
        return "too few runs"
    return f"{rank} [{low}-{high}]" if low != high else f"{rank} [{low}]"


def print_rank_table(table: RankTable, console: Console, top: int | None = None) -> None:
    direction = "higher is better" if table.higher_is_better else "lower is better"
    shown = table.configurations[:top] if top else table.configurations
    columns = ["rank [95%]", "tie", "configuration", "n", "median", "95% CI",
               "CV %", "min", "max"]  # fmt: skip
    if table.price_metric:
        columns.append(f"{table.price_metric}")
    out = text_table(columns, left={"configuration", "tie", "rank [95%]"},
                     title=f"{table.title} ({table.unit}; {direction}) by "
                     f"{', '.join(table.by)}")  # fmt: skip
    for c in shown:
        interval = f"{number(c.ci_low)}-{number(c.ci_high)}"
        if c.ci_method == "range":
            interval += " (range)"
        row = [rank_words(c.rank_low, c.rank_high, c.rank),
               f"dead heat {c.tie_group}" if c.dead_heat else "", c.configuration, str(c.n),
               number(c.median), interval, number(c.cv_pct), number(c.min),
               number(c.max)]  # fmt: skip
        if table.price_metric:
            row.append(number(c.price_per_unit))
        out.add_row(*row)
    console.print(out)
    if top and len(table.configurations) > top:
        console.print(f"{len(table.configurations) - top} more configurations not shown "
                      f"(--top {top})")  # fmt: skip
    for group in table.dead_heats:
        console.print(f"statistical dead heat: {', '.join(group)} (their 95% rank intervals "
                      "overlap: these runs cannot order them)")  # fmt: skip
    if table.common:
        console.print("all runs: " + ", ".join(f"{k}={v}" for k, v in table.common.items()))
    if table.left_out:
        reasons = Counter(row.reason for row in table.left_out)
        described = "; ".join(f"{n} {reason}" for reason, n in reasons.most_common())
        console.print(f"left out {len(table.left_out)} runs: {described} (--json lists them)")


def rank_csv(table: RankTable) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    by = list(table.by)
    writer.writerow([*CSV_COLUMNS, *by, "metric", "unit"])
    for c in table.configurations:
        data = c.model_dump()
        row = [";".join(data[k]) if k == "studies" else data[k] for k in CSV_COLUMNS]
        writer.writerow([*row, *(c.facts.get(k, "") for k in by), table.metric, table.unit])
    return buffer.getvalue()
