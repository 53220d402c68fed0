"""CPU quota and throttling from cgroup v1 and v2 files."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.observe.cgroup import (
    cpu_cgroup,
    parse_cgroup_file,
    parse_cpu_max,
    parse_mountinfo,
    parse_throttling,
    read_throttling,
)
from dbscale.observe.procfs import ProcFs
from tests.observe.conftest import fixture_text


def test_cgroup_paths_hybrid_and_v2() -> None:
    assert parse_cgroup_file(fixture_text("cgroup_v1_hybrid.txt")) == ("/", "/")
    assert parse_cgroup_file("0::/user.slice/x\n") == ("/user.slice/x", None)
    assert parse_cgroup_file("3:cpu,cpuacct:/docker/abc\n") == (None, "/docker/abc")


def test_mountinfo_finds_both_hierarchies() -> None:
    v2, v1 = parse_mountinfo(fixture_text("mountinfo_hybrid.txt"))
    assert v2 == ("/", "/sys/fs/cgroup/unified")
    assert v1 == ("/", "/sys/fs/cgroup/cpu")
    v2, v1 = parse_mountinfo(fixture_text("mountinfo_v2.txt"))
    assert v2 == ("/", "/sys/fs/cgroup")
    assert v1 is None


def test_quota_and_throttling_counters() -> None:
    assert parse_cpu_max("max 100000\n") is None
    assert parse_cpu_max("20000 100000\n") == pytest.approx(0.2)
    v2 = parse_throttling(fixture_text("cpu_stat_v2.txt"))
    assert (v2.periods, v2.throttled_periods, v2.throttled_s) == (120, 90, 7.5)
    v1 = parse_throttling("nr_periods 67\nnr_throttled 58\nthrottled_time 1431385135\n")
    assert v1.throttled_periods == 58
    assert v1.throttled_s == pytest.approx(1.431385135)


def _fake_cgroup(
    tmp_path: Path, version: int, quota: str, parent_quota: str | None = None
) -> ProcFs:
    mount = tmp_path / "cgroup"
    leaf = mount / "bench" / "client"
    leaf.mkdir(parents=True)
    proc = tmp_path / "proc" / "self"
    proc.mkdir(parents=True)
    if version == 2:
        (proc / "cgroup").write_text("0::/bench/client\n")
        (proc / "mountinfo").write_text(f"24 30 0:22 / {mount} rw - cgroup2 cgroup2 rw\n")
        (leaf / "cpu.max").write_text(quota)
        if parent_quota:
            (leaf.parent / "cpu.max").write_text(parent_quota)
        (leaf / "cpu.stat").write_text(fixture_text("cpu_stat_v2.txt"))
    else:
        (proc / "cgroup").write_text("1:cpu:/bench/client\n0::/\n")
        (proc / "mountinfo").write_text(f"32 31 0:29 / {mount} rw - cgroup cgroup rw,cpu\n")
        (leaf / "cpu.cfs_quota_us").write_text(quota)
        (leaf / "cpu.cfs_period_us").write_text("100000\n")
        (leaf / "cpu.stat").write_text("nr_periods 10\nnr_throttled 4\nthrottled_time 250000000\n")
    return ProcFs(tmp_path / "proc")


def test_v2_tightest_quota_on_the_way_up(tmp_path: Path) -> None:
    cgroup = cpu_cgroup(_fake_cgroup(tmp_path, 2, "max 100000\n", parent_quota="50000 100000\n"))
    assert cgroup is not None and cgroup.version == 2
    assert cgroup.quota_cores == pytest.approx(0.5)
    counters = read_throttling(cgroup)
    assert counters is not None and counters.throttled_s == 7.5


def test_v1_quota(tmp_path: Path) -> None:
    cgroup = cpu_cgroup(_fake_cgroup(tmp_path, 1, "20000\n"))
    assert cgroup is not None and cgroup.version == 1
    assert cgroup.quota_cores == pytest.approx(0.2)
    unlimited = cpu_cgroup(_fake_cgroup(tmp_path / "u", 1, "-1\n"))
    assert unlimited is not None and unlimited.quota_cores is None


def test_no_cgroup_files(tmp_path: Path) -> None:
    assert cpu_cgroup(ProcFs(tmp_path)) is None
