from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.errors import InvalidTargetError
from dbscale.targets.url import redact_url, resolve_target


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        ("postgresql://bob:s3cret@db:5432/app", "postgresql://bob@db:5432/app"),
        (
            "postgresql://bob:p%40ss@db/app?sslmode=require",
            "postgresql://bob@db/app?sslmode=require",
        ),
        ("postgres://bob@db/app", "postgres://bob@db/app"),
        ("postgresql://:onlypw@db/app", "postgresql://db/app"),
        (
            "postgresql://db/app?password=s3cret&sslmode=verify-full&sslrootcert=/tmp/ca.crt",
            "postgresql://db/app?sslmode=verify-full&sslrootcert=/tmp/ca.crt",
        ),
        ("host=db user=bob password=s3cret dbname=app", "host=db user=bob dbname=app"),
        ("host=db password='with space' user=bob", "host=db user=bob"),
        ("postgresql://bob:s3cret@[::1]:5432/app", "postgresql://bob@[::1]:5432/app"),
        (
            "postgresql://u:pw@/db?host=/var/run/postgresql",
            "postgresql://u@/db?host=/var/run/postgresql",
        ),
    ],
)
def test_redact_url(url: str, redacted: str) -> None:
    assert redact_url(url) == redacted


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bob:s3cret@db:notaport/app",
        "postgresql://bob:s3cret@db/app?password=s3cret",
        "password=s3cret",
        "host=db sslpassword=s3cret",
    ],
)
def test_redaction_never_leaks(url: str) -> None:
    assert "s3cret" not in redact_url(url)


def test_default_and_embedded_keyword() -> None:
    assert resolve_target(None, {}).embedded
    assert resolve_target("embedded", {}).embedded
    assert resolve_target(" Embedded ", {}).embedded


def test_pgpassword_fills_in_a_missing_password() -> None:
    env = {"PGPASSWORD": "p@ss word"}
    spec = resolve_target("postgresql://bob@db:5432/app", env)
    assert spec.url == "postgresql://bob:p%40ss%20word@db:5432/app"
    assert "p%40ss" not in spec.describe()


def test_pgpassword_never_overrides_a_given_one() -> None:
    env = {"PGPASSWORD": "other"}
    assert resolve_target("postgresql://bob:mine@db/app", env).url == "postgresql://bob:mine@db/app"
    assert resolve_target("host=db password=mine", env).url == "host=db password=mine"


def test_pgpassword_without_user_and_keyvalue_form() -> None:
    env = {"PGPASSWORD": "pw"}
    assert resolve_target("postgresql://db/app", env).url == "postgresql://db/app?password=pw"
    assert resolve_target("host=db user=bob", env).url == "host=db user=bob password=pw"
    assert (
        resolve_target("host=db user=bob", {"PGPASSWORD": "it's"}).url
        == "host=db user=bob password='it\\'s'"
    )


def test_no_pgpassword_leaves_url_alone() -> None:
    assert resolve_target("postgresql://bob@db/app", {}).url == "postgresql://bob@db/app"


@pytest.mark.parametrize(
    "raw",
    ["mongodb://root@db/app", "postgresql://db:port/app", "just-a-host", "http://example.com"],
)
def test_malformed_targets(raw: str) -> None:
    with pytest.raises(InvalidTargetError) as info:
        resolve_target(raw, {})
    assert "postgresql://" in info.value.hint


def test_socket_discovery_reads_the_servers_directories(tmp_path: Path) -> None:
    from dbscale.targets.socket_dir import socket_candidates
    from dbscale.targets.url import loopback_postgres

    (tmp_path / "b").mkdir()
    (tmp_path / "b" / ".s.PGSQL.5544").touch()
    setting = f"@abstract, {tmp_path / 'a'}, {tmp_path / 'b'}"
    assert socket_candidates(setting, 5544) == [tmp_path / "b"]
    assert socket_candidates(setting, 5432) == []
    assert loopback_postgres("postgresql://u@127.0.0.1:5544/db") == ("127.0.0.1", 5544)
    assert loopback_postgres("postgresql://u@localhost/db") == ("localhost", 5432)
    assert loopback_postgres("postgresql://u@db1/db") is None
    assert loopback_postgres("mysql://u@127.0.0.1/db") is None
