"""Local targets in instance shapes: the server's processes, backends forked later included,
may run only on the chosen CPUs (as the kernel reports in /proc/PID/status); the memory budget
is enforced by a cgroup when one can be made, else it only sizes the settings, and says so."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import closing
from pathlib import Path
from types import ModuleType

import pytest

from dbscale.core import Session
from dbscale.errors import ConfigError, LocalServerError
from dbscale.plan.targets import prepare_targets
from dbscale.targets.cluster import ClusterShape, make_cluster
from dbscale.targets.facts import probe_config
from dbscale.targets.lifecycle import TargetPool
from dbscale.targets.local.binaries import find_postgres_binaries
from dbscale.targets.local.confinement import choose_cpus, format_cpu_list
from dbscale.targets.local.instance import memory_settings
from dbscale.targets.local.mariadb import find_mariadb_binaries
from dbscale.targets.spec import TargetEntry
from dbscale.values import parse_cpu_list
from tests.conftest import skip_or_fail


def _cpus_allowed(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(line.split(":\t")[1] for line in status.splitlines() if "Cpus_allowed_list" in line)


def test_cpu_lists() -> None:
    assert parse_cpu_list("0-2,5") == [0, 1, 2, 5]
    assert format_cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert choose_cpus(2, None, {3, 1, 7}) == (1, 3)
    assert choose_cpus(1, "7", {3, 7}) == (7,)
    with pytest.raises(ConfigError, match="needs 4 CPUs"):
        choose_cpus(4, None, {0, 1})
    with pytest.raises(ConfigError, match="may not use: 9"):
        choose_cpus(1, "9", {0, 1})


def test_memory_budget_sizes_the_settings() -> None:
    assert memory_settings(4, 100) == {
        "shared_buffers": "1024MB",
        "effective_cache_size": "3072MB",
        "work_mem": "10485kB",
        "maintenance_work_mem": "256MB",
    }


@pytest.mark.slow
def test_local_sizes_are_confined_to_their_cpus(core: ModuleType, tmp_path: Path) -> None:
    try:
        find_postgres_binaries()
    except Exception as exc:
        skip_or_fail(f"no PostgreSQL server programs: {exc}")
    available = sorted(os.sched_getaffinity(0))
    sizes = [1, 2] if len(available) >= 2 else [1]
    shared = Path("/var/tmp") / f"dbscale-test-local-{os.getpid()}"
    entry = TargetEntry.model_validate(
        {"name": "pg", "url": "local", "vcpus": sizes, "memory_gib": [0.5] * len(sizes),
         "local": {"dir": str(shared), "settings": {"fsync": False}}}
    )  # fmt: skip
    targets = prepare_targets([entry], {})
    try:
        with TargetPool(targets, tmp_path, env={}) as pool:
            for target, vcpus in zip(targets, sizes, strict=True):
                opened = pool[target.name]
                expected = format_cpu_list(tuple(available[:vcpus]))
                record = json.loads((tmp_path / "targets" / f"{target.name}.json").read_text())
                local = record["local"]
                assert local["cpus"] == expected
                assert local["all_confined"] is True
                assert _cpus_allowed(local["postmaster_pid"]) == expected
                # A backend forked after the start inherits the postmaster's mask.
                with closing(Session(probe_config(opened.url))) as session:
                    [[backend]] = session.query("select pg_backend_pid()")
                    assert _cpus_allowed(int(str(backend))) == expected
                    assert os.sched_getaffinity(int(str(backend))) == set(available[:vcpus])
                memory = local["memory"]
                assert memory["limit_bytes"] == 512 * 1024 * 1024
                assert record["server"]["settings"]["shared_buffers"] == "128MB"
                if memory["enforced_by"] is not None:
                    cgroup = Path(memory["cgroup"])
                    assert memory["postmaster_cgroup"].endswith(cgroup.name)
                    limit = (
                        "memory.max" if "v2" in memory["enforced_by"] else "memory.limit_in_bytes"
                    )
                    assert int((cgroup / limit).read_text()) == 512 * 1024 * 1024
                else:
                    assert "only the settings are sized" in memory["note"]
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@pytest.mark.slow
def test_a_local_mariadb_is_confined_thread_by_thread(core: ModuleType, tmp_path: Path) -> None:
    if find_mariadb_binaries() is None:
        skip_or_fail("no MariaDB server program (apt-get install mariadb-server)")
    cpu = sorted(os.sched_getaffinity(0))[0]
    shared = Path("/var/tmp") / f"dbscale-test-local-mariadb-{os.getpid()}"
    entry = TargetEntry.model_validate(
        {"name": "maria", "url": "local", "vcpus": 1, "memory_gib": 0.5,
         "local": {"engine": "mariadb", "dir": str(shared)}}
    )  # fmt: skip
    try:
        with TargetPool(prepare_targets([entry], {}), tmp_path, env={}) as pool:
            assert pool["maria"].url.startswith("mysql://")
            record = json.loads((tmp_path / "targets" / "maria.json").read_text())
            pid = record["local"]["postmaster_pid"]
            threads = list(Path(f"/proc/{pid}/task").iterdir())
            assert len(threads) > 1  # mariadbd is one process of many threads
            assert {_cpus_allowed_task(t) for t in threads} == {str(cpu)}
            assert record["server"]["dialect"] == "mysql"
            assert record["server"]["settings"]["innodb_buffer_pool_size"] == str(256 * 1024**2)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _cpus_allowed_task(task: Path) -> str:
    status = (task / "status").read_text()
    return next(line.split(":\t")[1] for line in status.splitlines() if "Cpus_allowed_list" in line)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's servers run as another OS user")
@pytest.mark.parametrize("engine", ["mariadb-galera", "postgresql-sync"])
def test_a_cluster_directory_its_server_user_cannot_reach_is_named(
    tmp_path: Path, engine: str
) -> None:
    """As root the nodes run as postgres or mysql: a directory under a private one is refused
    with that reason (a Galera node said only 'has not been started' before, issue 40)."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    cluster = make_cluster(engine, private / "c", ClusterShape(nodes=2), name="c")
    with pytest.raises(LocalServerError) as info:
        cluster.start()
    assert "OS user cannot write" in info.value.message, info.value.message
    assert "/var/tmp" in info.value.hint
