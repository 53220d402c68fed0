"""A target's limits against its points: the data sets' bytes, family by family."""

from __future__ import annotations

from pathlib import Path

from dbscale.plan.build import RunOptions
from dbscale.run.target_limits import data_bytes, disk_warning
from tests.plan.helpers import study


def _points(workload: str, *sets: str) -> list:  # type: ignore[type-arg]
    return study(RunOptions(workload=workload, target="postgresql://u@h/db",
                            set_params=list(sets))).points  # fmt: skip


def test_one_familys_data_sets_replace_each_other_and_families_add_up() -> None:
    small = _points("tpcb", "scale=10")
    big = _points("tpcb", "scale=100")
    sysbench = _points("sysbench:oltp_write_only", "tables=4", "table_size=1000000")
    tpcc = _points("tpcc", "warehouses=10")
    assert data_bytes(small + big) == data_bytes(big) == 100 * 100_000 * 160
    assert data_bytes(big + sysbench) == 100 * 100_000 * 160 + 4_000_000 * 260
    assert data_bytes(tpcc) == 10 * 115e6


def test_the_disk_warning_compares_with_the_free_space(tmp_path: Path) -> None:
    assert disk_warning("db", _points("tpcb", "scale=1"), tmp_path) is None
    warning = disk_warning(
        "db", _points("tpcc", "warehouses=100000", "active_warehouses=1"), tmp_path
    )
    assert warning is not None and f"the disk of {tmp_path} has" in warning
    assert (
        disk_warning("db", _points("tpcc", "warehouses=100000", "active_warehouses=1"), None)
        is None
    )
