from __future__ import annotations

import pytest

from dbscale.errors import ConfigError
from dbscale.values import (
    format_duration,
    parse_clients,
    parse_duration,
    parse_param_value,
    parse_set,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("2m", 120.0),
        ("500ms", 0.5),
        ("1h", 3600.0),
        ("1m30s", 90.0),
        ("1.5s", 1.5),
        ("10", 10.0),
        ("0.25", 0.25),
        (" 5 s ", 5.0),
        ("2min", 120.0),
        ("3S", 3.0),
    ],
)
def test_durations_parse(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "10x", "s", "ms5", "0", "0s", "-5s", "5s junk", "1m 2x"])
def test_bad_durations_name_the_option(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_duration(text, "--warmup")
    assert "--warmup" in info.value.message
    assert "30s" in info.value.hint


def test_format_duration_round_trips() -> None:
    for seconds in (0.5, 1.0, 10.0, 90.0, 120.0, 3600.0):
        assert parse_duration(format_duration(seconds)) == pytest.approx(seconds)


def test_clients_lists() -> None:
    assert parse_clients(["1,4,8"]) == [1, 4, 8]
    assert parse_clients(["2", "16"]) == [2, 16]
    assert parse_clients([" 3 , 5 "]) == [3, 5]
    assert parse_clients([]) == []


@pytest.mark.parametrize("value", ["0", "1,0", "-2", "x", "1,,2", "1.5"])
def test_bad_clients(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_clients([value])
    assert "--clients" in info.value.message


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10),
        ("-3", -3),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        ("true", True),
        ("FALSE", False),
        ("hash", "hash"),
        ("on", "on"),
        ("", ""),
    ],
)
def test_set_values_are_typed(text: str, value: object) -> None:
    parsed = parse_param_value(text)
    assert parsed == value
    assert type(parsed) is type(value)


def test_set_pairs() -> None:
    assert parse_set(["scale=10", "foreign-keys=true", "partition_method=hash", "scale=20"]) == {
        "scale": 20,
        "foreign_keys": True,
        "partition_method": "hash",
    }
    assert parse_set(["note=a=b"]) == {"note": "a=b"}


@pytest.mark.parametrize("pair", ["scale", "=10", "sc ale=1", "1x=2"])
def test_bad_set_pairs(pair: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_set([pair])
    assert "--set" in info.value.message
    assert "dbscale workloads" in info.value.hint
