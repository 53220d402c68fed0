"""Bad input that reaches the native core or the server: one `error:` line, one `hint:` line,
a non-zero exit, no traceback."""

from __future__ import annotations

from pathlib import Path

from dbscale.errors import EXIT_NOT_PREPARED, EXIT_TARGET, EXIT_USAGE
from tests.conftest import PgTestServer
from tests.integration.conftest import dbscale


def test_unknown_workload(live: PgTestServer) -> None:
    done = dbscale("run", "tpcc-ish", "--target", live.url, "-T", "1s")
    done.assert_user_error()
    assert done.code == EXIT_USAGE
    assert "tpcb" in done.err  # the known ones are named


def test_unknown_set_key(live: PgTestServer) -> None:
    done = dbscale("prepare", "tpcb", "--target", live.url, "--set", "scael=2")
    done.assert_user_error()
    assert done.code == EXIT_USAGE
    assert "scale" in done.err


def test_bad_set_value(live: PgTestServer) -> None:
    done = dbscale("prepare", "tpcb", "--target", live.url, "--set", "scale=ten")
    done.assert_user_error()
    assert done.code == EXIT_USAGE


def test_clients_zero(live: PgTestServer) -> None:
    done = dbscale("run", "tpcb", "--target", live.url, "-c", "0")
    done.assert_user_error()
    assert done.code == EXIT_USAGE


def test_malformed_url(live: PgTestServer) -> None:
    done = dbscale("run", "tpcb", "--target", "postgresql://[nonsense", "-T", "1s")
    done.assert_user_error()
    assert done.code == EXIT_USAGE


def test_unreachable_host(live: PgTestServer, tmp_path: Path) -> None:
    done = dbscale(
        "run", "tpcb", "--target", "postgresql://postgres@127.0.0.1:1/postgres", "-T", "1s",
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    done.assert_user_error()
    assert done.code == EXIT_TARGET
    assert not (tmp_path / "r" / "runs.jsonl").exists()


def test_wrong_password(live: PgTestServer) -> None:
    url = live.scram_url.replace("scram-secret", "wrong-secret")
    done = dbscale("run", "tpcb", "--target", url, "-T", "1s")
    done.assert_user_error()
    assert done.code == EXIT_TARGET
    assert "password" in done.err.lower()
    assert "wrong-secret" not in done.text


def test_missing_database(live: PgTestServer) -> None:
    done = dbscale("run", "tpcb", "--target", live.url_for("no_such_db"), "-T", "1s")
    done.assert_user_error()
    assert done.code == EXIT_TARGET


def test_missing_tables(live: PgTestServer) -> None:
    url = live.fresh_database("dbscale_empty")
    done = dbscale("run", "tpcb", "--target", url, "-T", "1s")
    done.assert_user_error()
    assert done.code == EXIT_NOT_PREPARED
    assert "dbscale prepare" in done.err


def test_cleanup_then_run_is_not_prepared(live: PgTestServer) -> None:
    url = live.fresh_database("dbscale_cleanup")
    dbscale("prepare", "tpcb", "--target", url).assert_ok()
    dbscale("cleanup", "tpcb", "--target", url).assert_ok()
    assert live.psql("select count(*) from pg_tables where tablename like 'pgbench_%'",
                     "dbscale_cleanup") == "0"  # fmt: skip
    done = dbscale("run", "tpcb", "--target", url, "-T", "1s")
    done.assert_user_error()
    assert done.code == EXIT_NOT_PREPARED
