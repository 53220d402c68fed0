"""Values that used to be accepted and should not be (issue 40, case 15): a duration with a
repeated unit, digits of another script, a rate of 1e-300, a system directory for a local
server, labels without limits; and both spellings of one duration read alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from dbscale.cli.app import run_cli
from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig
from dbscale.errors import EXIT_USAGE, ConfigError
from dbscale.history.ingest import parse_labels
from dbscale.targets.spec import LocalSettings
from dbscale.values import parse_clients, parse_duration


@pytest.mark.parametrize("text", ["1h1h", "30s2m", "1s1sec", "1m1min"])
def test_a_repeated_or_upside_down_unit_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="repeats a unit"):
        parse_duration(text)


def test_one_duration_read_alike_in_both_spellings() -> None:
    assert parse_duration("1e9ms") == parse_duration("1000000000ms") == 1e6
    assert parse_duration("1h30m") == 5400 and parse_duration("1.5e1s") == 15


def test_digits_of_another_script_are_not_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError):
        parse_clients(["٣"])
    with pytest.raises(ConfigError):
        parse_duration("٣s")
    for argv in (["run", "tpcb", "-c", "٣"], ["run", "tpcb", "--threads=٣"]):
        assert run_cli([*argv, "--dry-run"]) == EXIT_USAGE
        assert "digits 0-9" in capsys.readouterr().err


def test_a_rate_of_1e_300_is_refused() -> None:
    base = {
        "target": TargetConfig(url="postgresql://h/db"),
        "workload": WorkloadConfig(name="tpcb"),
    }
    with pytest.raises(ValidationError):
        RunConfig(**base, rate_tps=1e-300)  # type: ignore[arg-type]
    assert RunConfig(**base, rate_tps=0.001).rate_tps == 0.001  # type: ignore[arg-type]


@pytest.mark.parametrize(("directory", "needle"), [
    ("/etc", "system directory"), ("/usr/local/x", "system directory"), ("/", "system directory"),
    ("/var/tmp", "system directory"),
])  # fmt: skip
def test_a_local_server_never_goes_in_a_system_directory(directory: str, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        LocalSettings(dir=directory)


def test_a_local_server_goes_only_in_an_empty_directory_or_its_own(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValidationError, match="holds other files"):
        LocalSettings(dir=str(tmp_path))
    own = tmp_path / "server"
    (own / "data").mkdir(parents=True)
    assert LocalSettings(dir=str(own)).dir == str(own)
    assert LocalSettings(dir=str(tmp_path / "new")).dir is not None
    assert LocalSettings(dir="a-name").dir == "a-name"


@pytest.mark.parametrize("pair", ["version=" + "x" * 201, "version=a\nb", "bad name=1",
                                  "n" * 65 + "=1", "=1"])  # fmt: skip
def test_labels_are_a_word_and_one_short_line(pair: str) -> None:
    with pytest.raises(ConfigError):
        parse_labels([pair])
    assert parse_labels(["version=16.4", "commit=abc 123"]) == {
        "version": "16.4", "commit": "abc 123",
    }  # fmt: skip
    with pytest.raises(ConfigError, match="at most 20"):
        parse_labels([f"l{i}=v" for i in range(21)])
