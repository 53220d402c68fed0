"""How long loading a point's data set takes, for the study's ETA: the rows (or TPC-C warehouses)
the workload's parameters ask for, at the load rates `dbscale prepare` measured on this project's
2-core machine (private servers, 2026-11-25; docs/plans.md). A real server may load faster or
slower: the estimate says which rates it used, and is printed apart from the runs' time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dbscale.modes import Dialect, WorkloadFamily
from dbscale.values import ParamValue

# Rows per second of `dbscale prepare`, by workload family and server (tables, then keys).
TPCB, SYSBENCH, TPCC = WorkloadFamily.TPCB, WorkloadFamily.SYSBENCH, WorkloadFamily.TPCC
YCSB, TPCH = WorkloadFamily.YCSB, WorkloadFamily.TPCH
ROWS_PER_S = {
    (TPCB, Dialect.POSTGRESQL): 1.1e6,  # scale 100: 10.0 M rows in 8.8 s
    (TPCB, Dialect.MYSQL): 4.8e5,  # as sysbench's rows on MariaDB
    (SYSBENCH, Dialect.POSTGRESQL): 6.6e5,  # 4 x 1 M rows in 6.0 s
    (SYSBENCH, Dialect.MYSQL): 4.8e5,  # 4 x 1 M rows in 8.3 s (MariaDB)
    (YCSB, Dialect.POSTGRESQL): 5.6e4,  # 100,000 rows in 1.78 s (2026-11-29)
    (YCSB, Dialect.MYSQL): 3.0e4,  # 100,000 rows in 3.33 s (MariaDB)
    (TPCH, Dialect.POSTGRESQL): 1.03e5,  # scale factor 1: 8.66 M rows in 83.7 s
    (TPCH, Dialect.MYSQL): 3.2e4,  # SF 0.1 (MariaDB): 0.87 M rows in 26.8 s, 20.7 of them keys
}
# TPC-C loads whole warehouses (about 500,000 rows each).
WAREHOUSES_PER_S = {Dialect.POSTGRESQL: 58.7 / 60, Dialect.MYSQL: 45.7 / 60}
DEFAULTS = {"scale": 1, "tables": 1, "table_size": 10_000, "warehouses": 1, "recordcount": 1_000,
            "scale_factor": 1}  # fmt: skip
# TPC-H's rows per unit of scale factor (dbgen: 8,661,245 at SF 1).
TPCH_ROWS_PER_SF = 8_661_245
# Bytes on disk, tables and indexes, measured after `dbscale prepare` (2026-11-27): TPC-B scale 5
# took 78.8 MB on PostgreSQL 15 (158 bytes per row); sysbench 2 x 200,000 rows 102 MB (PostgreSQL)
# and 98.7 MB (MariaDB; 255 and 247 per row); TPC-C 2 warehouses 223 MB (PostgreSQL) and 195 MB
# (MariaDB: 92 MB per warehouse and 11 MB of items). The larger of the two, rounded up. YCSB:
# 100,000 rows took 121 MB on PostgreSQL (2026-11-29); TPC-H scale factor 1, 1.71 GB.
BYTES_PER_ROW = {TPCB: 160, SYSBENCH: 260, YCSB: 1_220, TPCH: 200}
BYTES_PER_WAREHOUSE = 115e6


@dataclass(frozen=True)
class LoadEstimate:
    amount: float  # rows, or warehouses for TPC-C
    unit: str  # "rows" or "warehouses"
    seconds: float
    bytes: float = 0.0  # on disk once loaded
    family: WorkloadFamily = TPCB  # one family's tables replace each other's (scripts: TPC-B's)


def _number(params: Mapping[str, ParamValue], key: str) -> float:
    value = params.get(key, DEFAULTS[key])
    try:
        return float(str(value))
    except ValueError:
        return float(DEFAULTS[key])


def estimate_load(
    family: WorkloadFamily, params: Mapping[str, ParamValue], server: Dialect
) -> LoadEstimate:
    """The data set of a workload of `family` with `params` on a `server`."""
    if family in (TPCC, WorkloadFamily.CH):  # CH-benCHmark's added tables are 10,030 rows
        warehouses = _number(params, "warehouses")
        return LoadEstimate(warehouses, "warehouses", warehouses / WAREHOUSES_PER_S[server],
                            warehouses * BYTES_PER_WAREHOUSE, TPCC)  # fmt: skip
    if family is SYSBENCH:
        rows = _number(params, "tables") * _number(params, "table_size")
        return LoadEstimate(rows, "rows", rows / ROWS_PER_S[(SYSBENCH, server)],
                            rows * BYTES_PER_ROW[SYSBENCH], SYSBENCH)  # fmt: skip
    if family is TPCH:
        rows = TPCH_ROWS_PER_SF * _number(params, "scale_factor")
        return LoadEstimate(rows, "rows", rows / ROWS_PER_S[(TPCH, server)],
                            rows * BYTES_PER_ROW[TPCH], TPCH)  # fmt: skip
    if family is YCSB:
        rows = _number(params, "recordcount")
        return LoadEstimate(rows, "rows", rows / ROWS_PER_S[(YCSB, server)],
                            rows * BYTES_PER_ROW[YCSB], YCSB)  # fmt: skip
    rows = 100_000 * _number(params, "scale")
    return LoadEstimate(rows, "rows", rows / ROWS_PER_S[(TPCB, server)],
                        rows * BYTES_PER_ROW[TPCB], TPCB)  # fmt: skip


def describe(estimates: list[LoadEstimate]) -> str:
    """`1.2 billion rows` / `300 warehouses` / both, for the ETA line."""
    parts = []
    for unit in ("rows", "warehouses"):
        amount = sum(e.amount for e in estimates if e.unit == unit)
        if amount:
            parts.append(f"{_count(amount)} {unit}")
    return " and ".join(parts) or "nothing"


def _count(amount: float) -> str:
    for size, word in ((1e9, "billion"), (1e6, "million")):
        if amount >= size:
            return f"{amount / size:.3g} {word}"
    return f"{amount:,.0f}"
