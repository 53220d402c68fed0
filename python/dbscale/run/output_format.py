"""Which familiar shape a run's plain output takes: pgbench's (`progress: ...` lines on stderr,
`tps = ...` block) or sysbench's (`[ 1s ] thds: ...` lines and the `SQL statistics:` block, both
on stdout as sysbench prints them). `auto` gives each workload its own family's shape: sysbench
workloads sysbench's, the rest pgbench's. `lines`: the family's progress lines, and one line per
finished run instead of its block (what a terminal shows; `dbscale capacity` always).
"""

from __future__ import annotations

from enum import StrEnum

from dbscale.modes import WorkloadFamily


class OutputFormat(StrEnum):
    AUTO = "auto"
    PGBENCH = "pgbench"
    SYSBENCH = "sysbench"
    LINES = "lines"


def shape_for(output_format: OutputFormat, family: WorkloadFamily | None) -> OutputFormat:
    """PGBENCH or SYSBENCH: the one asked for, else the workload family's own."""
    if output_format not in (OutputFormat.AUTO, OutputFormat.LINES):
        return output_format
    return OutputFormat.SYSBENCH if family is WorkloadFamily.SYSBENCH else OutputFormat.PGBENCH
