"""What loading a workload's data shows (the native `prepare`/`cleanup` summary), and the demo's
check whether the embedded server already holds the data it needs.
"""

from __future__ import annotations

from contextlib import closing

from rich.console import Console

from dbscale import core
from dbscale.core.answers import DataSummary
from dbscale.errors import DbscaleError
from dbscale.targets.facts import probe_config

# pgbench's rows per scale unit; the demo's reuse check compares row counts with them.
TPCB_ACCOUNTS_PER_SCALE = 100_000


def print_data_summary(console: Console, what: str, summary: DataSummary) -> None:
    for step in summary.steps:
        console.print(f"  {step.name}: {step.seconds:.2f} s", highlight=False)
    rows = summary.rows if summary.rows is not None else "?"
    tail = f" in {summary.seconds:.2f} s" if summary.seconds is not None else ""
    console.print(f"{what} done: {rows} rows{tail}", highlight=False)


def tpcb_scale_loaded(url: str) -> int | None:
    """The complete TPC-B scale on the server at `url`, or None (missing or partial)."""
    try:
        with closing(core.Session(probe_config(url))) as session:
            [row] = session.query(
                "select (select count(*) from pgbench_branches),"
                " (select count(*) from pgbench_tellers),"
                " (select count(*) from pgbench_accounts)"
            )
        branches, tellers, accounts = (int(str(v)) for v in row)
    except (DbscaleError, ValueError):
        return None
    if branches < 1 or tellers != 10 * branches or accounts != TPCB_ACCOUNTS_PER_SCALE * branches:
        return None
    return branches
