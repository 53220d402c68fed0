from __future__ import annotations

import pytest

from dbscale import errors
from dbscale.errors import (
    EXIT_CANCELLED,
    EXIT_INTERNAL,
    EXIT_NOT_PREPARED,
    EXIT_TARGET,
    EXIT_USAGE,
    AuthenticationError,
    Cancelled,
    ConfigError,
    DbscaleError,
    InternalError,
    InvalidTargetError,
    NotPreparedError,
    TargetError,
    from_core,
)


class FakeCoreError(Exception):
    """Shaped like the native CoreError: args == (kind, message, hint)."""


def test_from_core_keeps_message_and_hint() -> None:
    err = from_core(FakeCoreError("connect_auth", "password authentication failed", "check it"))  # type: ignore[arg-type]
    assert isinstance(err, AuthenticationError)
    assert isinstance(err, TargetError)
    assert err.exit_code == EXIT_TARGET
    assert err.message == "password authentication failed"
    assert err.hint == "check it"


def test_from_core_unknown_kind_is_internal() -> None:
    err = from_core(FakeCoreError("martian", "odd", ""))  # type: ignore[arg-type]
    assert isinstance(err, InternalError)
    assert err.exit_code == EXIT_INTERNAL
    assert "martian" in err.message
    assert err.hint  # the default hint fills in an empty one


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (ConfigError, EXIT_USAGE),
        (InvalidTargetError, EXIT_USAGE),
        (TargetError, EXIT_TARGET),
        (NotPreparedError, EXIT_NOT_PREPARED),
        (Cancelled, EXIT_CANCELLED),
    ],
)
def test_exit_codes(cls: type[DbscaleError], code: int) -> None:
    assert cls("x").exit_code == code


def test_render_is_two_lines() -> None:
    text = ConfigError("bad\n  value", "fix it").render()
    assert text == "error: bad value\nhint: fix it"
    assert Cancelled("stopped").render().startswith("cancelled: stopped\nhint: ")


def test_exit_codes_are_distinct() -> None:
    codes = [v for k, v in vars(errors).items() if k.startswith("EXIT_")]
    assert len(codes) == len(set(codes))
