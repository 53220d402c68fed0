"""mysql:// and mariadb:// targets: accepted, their password from MYSQL_PWD (else PGPASSWORD),
redacted like any other."""

from __future__ import annotations

from dbscale.targets.url import redact_url, resolve_target


def test_mysql_and_mariadb_urls_are_accepted_as_written() -> None:
    for url in (
        "mysql://root@127.0.0.1:3306/sbtest",
        "mariadb://bench@db/sbtest?socket=/run/mysqld/mysqld.sock&sslmode=disable",
    ):
        assert resolve_target(url, {}).url == url


def test_mysql_pwd_fills_in_a_missing_password() -> None:
    env = {"MYSQL_PWD": "my pw", "PGPASSWORD": "pg"}
    assert resolve_target("mysql://bench@db/sb", env).url == "mysql://bench:my%20pw@db/sb"
    assert resolve_target("mysql://db/sb", env).url == "mysql://root:my%20pw@db/sb"
    assert resolve_target("mysql://bench@db/sb", {"PGPASSWORD": "pg"}).url == (
        "mysql://bench:pg@db/sb"
    )
    assert resolve_target("mysql://bench:own@db/sb", env).url == "mysql://bench:own@db/sb"
    assert resolve_target("postgresql://bob@db/app", env).url == "postgresql://bob:pg@db/app"


def test_mysql_passwords_are_redacted() -> None:
    assert (
        redact_url("mysql://bench:secret@db:3306/sb?socket=/s")
        == "mysql://bench@db:3306/sb?socket=/s"
    )
