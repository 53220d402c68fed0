"""Targets of several hosts in the forms people already write: libpq's host list
(`postgresql://h1:p1,h2:p2/db`, `host=h1,h2 port=p1,p2`) with `target_session_attrs`, and a
MySQL host list. A primary and a standby of it (its data copied, in recovery) are started for
the test; where each run's connections went is read from the record's `connections_by_host`."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbscale.errors import LocalServerError
from dbscale.targets.local.binaries import find_postgres_binaries
from dbscale.targets.local.postgres import LocalPostgres
from tests.conftest import shared_directory, skip_or_fail
from tests.integration.conftest import dbscale, read_runs
from tests.integration.mariadb import mariadb_from_env


@pytest.fixture(scope="module")
def pair(core: object) -> Iterator[tuple[LocalPostgres, LocalPostgres]]:
    try:
        binaries = find_postgres_binaries()
    except LocalServerError as exc:
        skip_or_fail(f"no PostgreSQL server programs: {exc.message}")
        raise
    with shared_directory() as base:
        primary = LocalPostgres(base / "primary", binaries=binaries, settings={"fsync": False})
        standby = LocalPostgres(base / "standby", binaries=binaries, settings={"fsync": False})
        try:
            primary.start()
            primary.stop()
            # The standby is the primary's data in recovery, with no primary to follow: a hot
            # standby, read-only, that pg_is_in_recovery() reports as one. Its own init makes
            # its directories and certificates; then its data is the primary's.
            standby.init()
            shutil.rmtree(standby.data_dir)
            subprocess.run(["cp", "-a", str(primary.data_dir), str(standby.data_dir)], check=True)
            signal_file = standby.data_dir / "standby.signal"
            signal_file.touch()
            owner = (standby.data_dir / "PG_VERSION").stat()
            os.chown(signal_file, owner.st_uid, owner.st_gid)
            primary.start()
            standby.start()
            yield primary, standby
        finally:
            standby.destroy()
            primary.destroy()


def _ran_on(url: str, tmp_path: Path, name: str) -> dict[str, int]:
    script = tmp_path / "one.sql"
    script.write_text("SELECT 1;\n")
    out = tmp_path / name
    dbscale("run", f"script:{script}", "--target", url, "-c", "2", "-t", "2",
            "--out", str(out)).assert_ok()  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    return {h["host"]: h["connections"] for h in record["connections_by_host"]}


def test_target_session_attrs_pick_the_host_libpq_would(
    pair: tuple[LocalPostgres, LocalPostgres], tmp_path: Path
) -> None:
    primary, standby = pair
    down = 1  # nothing listens on port 1: the first host of each list is a failover case
    p = f"postgresql://postgres@127.0.0.1:{primary.port}/postgres"
    s = f"postgresql://postgres@127.0.0.1:{standby.port}/postgres"
    listed = f"127.0.0.1:{down},127.0.0.1:{standby.port},127.0.0.1:{primary.port}"
    for attrs, went in [
        ("any", s), ("read-write", p), ("primary", p), ("read-only", s), ("standby", s),
        ("prefer-standby", s),
    ]:  # fmt: skip
        url = f"postgresql://postgres@{listed}/postgres?target_session_attrs={attrs}"
        counts = _ran_on(url, tmp_path, attrs)
        assert counts[went] == 2 and sum(counts.values()) == 2, (attrs, counts)
    # libpq's key=value spelling, and prefer-standby falling back to the primary.
    keyvalue = (f"host=127.0.0.1,127.0.0.1 port={down},{primary.port} user=postgres "
                "dbname=postgres target_session_attrs=prefer-standby")  # fmt: skip
    assert _ran_on(keyvalue, tmp_path, "kv")[p] == 2


def test_no_host_that_will_do_is_one_error_naming_each(
    pair: tuple[LocalPostgres, LocalPostgres], tmp_path: Path
) -> None:
    _, standby = pair
    url = (f"postgresql://postgres@127.0.0.1:1,127.0.0.1:{standby.port}/postgres"
           "?target_session_attrs=read-write")  # fmt: skip
    done = dbscale("run", "tpcb", "--target", url, "-T", "1s", "--out", str(tmp_path / "r"))
    done.assert_user_error()
    assert "no host took the connection as target_session_attrs=read-write" in done.err
    assert "session is read-only" in done.err
    assert ":1/postgres:" in done.err  # the refused host is named too


def test_a_mysql_host_list_fails_over(tmp_path: Path, core: object) -> None:
    server = mariadb_from_env()
    url = f"mysql://root@127.0.0.1:1,127.0.0.1:{server.port}/dbscale_test"
    counts = _ran_on(url, tmp_path, "mysql")
    assert counts[f"mysql://root@127.0.0.1:{server.port}/dbscale_test"] == 2
