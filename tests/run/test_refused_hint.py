"""The hint for a run whose clients the server refused names what refused them: no slot left
(max_connections), a server starting, stopping or not the primary, or a statement that would
not prepare (issue 40: a gone primary was told to lower --clients)."""

from __future__ import annotations

from dbscale.results.record import RunRecord
from dbscale.run.resume_checks import refused_hint


def _refused(kind: str | None) -> RunRecord:
    return RunRecord.from_json({"clients": 4, "clients_connected": 2, "connect_error_kind": kind,
                                "server_max_connections": 100})  # fmt: skip


def test_each_refusal_gets_its_own_hint() -> None:
    assert "max_connections (100)" in (refused_hint(_refused("connect_limit")) or "")
    assert "max_connections (100)" in (refused_hint(_refused(None)) or "")  # older records
    starting = refused_hint(_refused("connect_unavailable")) or ""
    assert "primary" in starting and "max_connections" not in starting
    assert "prepare" in (refused_hint(_refused("sql")) or "")
    assert refused_hint(_refused("connect_auth")) is None  # the error's own hint says it
