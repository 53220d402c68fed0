"""The last guard: every results file's text is scrubbed of passwords as it is written, and the
scrubbing never breaks the JSON it passes through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbscale.files import append_durable, write_atomic
from dbscale.redaction import scrub_text
from dbscale.targets.spec import TargetEntry


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [("postgresql://u:p%40ss@h:5432/db", "postgresql://u@h:5432/db"),
     ("postgresql://h:5432/db", "postgresql://h:5432/db"),
     ("mysql://root@127.0.0.1:3306/x", "mysql://root@127.0.0.1:3306/x"),
     ("host=h password=secret dbname=x", "host=h password=*** dbname=x"),
     ("host=h PASSWORD = 'a b\\' c' dbname=x", "host=h PASSWORD=*** dbname=x"),
     ("postgresql://h/db?password=x&sslmode=on", "postgresql://h/db?password=***&sslmode=on"),
     ("to postgresql://bob:hunter2@db1/s: refused", "to postgresql://bob@db1/s: refused"),
     ("mysql://a:b@c/d,mysql://e:f@g/h", "mysql://a@c/d,mysql://e@g/h"),
     ("password_env=PGPW sslpassword=k", "password_env=PGPW sslpassword=***")],
)  # fmt: skip
def test_passwords_are_scrubbed_from_any_text(text: str, scrubbed: str) -> None:
    assert scrub_text(text) == scrubbed


def test_scrubbed_json_stays_json(tmp_path: Path) -> None:
    document = {
        "a": 'x password=abc"def',
        "b": "postgresql://u:p\\q@h/db",
        "c": "password='x\"y'",
        "d": ["postgresql://a:b@c/d", {"e": "host=h password=s3"}],
    }
    write_atomic(tmp_path / "doc.json", json.dumps(document))
    append_durable(tmp_path / "lines.jsonl", json.dumps(document))
    for name in ("doc.json", "lines.jsonl"):
        text = (tmp_path / name).read_text()
        back = json.loads(text)
        assert "abc" not in text and "s3" not in text and ":b@" not in text
        assert back["d"][0] == "postgresql://a@c/d" and back["b"] == "postgresql://u@h/db"


def test_a_targets_every_url_is_redacted() -> None:
    target = TargetEntry.model_validate({
        "name": "c", "nodes": ["postgresql://u:pw1@a/db", {"url": "postgresql://u:pw2@b/db"}],
        "socket_url": "host=/tmp password=pw3", "pooled_url": "postgresql://u:pw4@p/db",
    })  # fmt: skip
    text = target.redacted().model_dump_json()
    assert not any(f"pw{i}" in text for i in range(1, 5)), text
    assert target.redacted().more_urls == ["postgresql://u@b/db"]
