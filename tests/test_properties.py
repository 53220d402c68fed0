"""Property-based tests of the command line's edge (hypothesis): whatever a user types as a
duration, rate, client list, `--set` value, target URL or plan file, dbscale either accepts it or
refuses it with exactly one `error:` line and one `hint:` line and a documented exit code; never
a traceback, never exit 70. Valid values round-trip. All through `--dry-run`: nothing runs."""

from __future__ import annotations

import contextlib
import io
import math
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbscale.cli import commands
from dbscale.cli.app import run_cli
from dbscale.core.config import MAX_DURATION_S, MIN_DURATION_S
from dbscale.values import format_duration, parse_duration

TARGET = ("--target", "postgresql://bench@127.0.0.1:1/bench")
DOCUMENTED = {0, 1, 2, 3, 4}  # a dry run never reaches the exit codes of running
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text a person (or a script gone wrong) might type: digits, units, signs, junk, unicode.
typed = st.one_of(
    st.text(alphabet="0123456789.,-+eE msh:=[]{}' \"", max_size=24),
    st.text(max_size=16),
    st.sampled_from(["", " ", "0", "-1", "1e400", "nan", "inf", "99999999999999999999999s",
                     "0.0001ms", "1,,2", "1,a", "[1,2]", "{}", "\x00", "1m30s", "8"]),
)  # fmt: skip


def dry_run(*argv: str) -> tuple[int, str]:
    """The dry run's verdict on the input, without reading the target's limits (a made-up host
    name would wait on name resolution: that is not what these cases test)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
            mock.patch.object(commands, "_dry_run_limits", lambda _study: None):  # fmt: skip
        code = run_cli(["run", *argv, "--dry-run"])
    return code, err.getvalue()


def assert_accepted_or_refused(code: int, err: str) -> None:
    assert code in DOCUMENTED, (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if code != 0:
        lines = err.strip().splitlines()
        assert len([ln for ln in lines if ln.startswith("error: ")]) == 1, err
        assert len([ln for ln in lines if ln.startswith("hint: ")]) == 1, err


@FAST
@given(
    value=typed,
    flag=st.sampled_from(["-T", "-R", "-c", "-j", "--warmup", "--ramp", "--repeat",
                          "--max-tries", "--seed", "--cooldown"]),
)  # fmt: skip
def test_load_flags_are_accepted_or_refused_in_one_line(value: str, flag: str) -> None:
    assert_accepted_or_refused(*dry_run("tpcb", *TARGET, flag, value))


@FAST
@given(key=typed, value=typed)
def test_set_values_are_accepted_or_refused_in_one_line(key: str, value: str) -> None:
    assert_accepted_or_refused(*dry_run("tpcb", *TARGET, "--set", f"{key}={value}"))


@FAST
@given(url=typed)
def test_target_urls_are_accepted_or_refused_in_one_line(url: str) -> None:
    for prefix in ("", "postgresql://", "mysql://"):
        assert_accepted_or_refused(*dry_run("tpcb", "--target", prefix + url))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)  # fmt: skip
plan_keys = st.sampled_from(["workload", "workloads", "targets", "load", "matrix", "repeat",
                             "warmup_runs", "cooldown", "order", "prepare", "statistics",
                             "name", "quick", "nonsense"])  # fmt: skip


@FAST
@given(plan=st.dictionaries(plan_keys, json_values, max_size=6), workload=st.booleans())
def test_plan_files_are_accepted_or_refused_in_one_line(
    plan: dict[str, object], workload: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if workload:
        plan.setdefault("workload", "tpcb")
    path = tmp_path_factory.mktemp("plan") / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, allow_unicode=True))
    assert_accepted_or_refused(*dry_run(str(path)))


@FAST
@given(plan=st.binary(max_size=64))
def test_binary_plan_files_are_refused_in_one_line(
    plan: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("bin") / "plan.yaml"
    path.write_bytes(plan)
    assert_accepted_or_refused(*dry_run(str(path)))


@FAST
@given(seconds=st.floats(min_value=MIN_DURATION_S, max_value=MAX_DURATION_S))
def test_valid_durations_round_trip(seconds: float) -> None:
    shown = format_duration(seconds)
    assert math.isclose(parse_duration(shown), seconds, rel_tol=1e-3, abs_tol=1e-3), shown
    code, err = dry_run("tpcb", *TARGET, "-T", f"{seconds!r}")
    assert code == 0, err


@FAST
@given(clients=st.lists(st.integers(1, 100_000), min_size=1, max_size=6, unique=True))
def test_valid_client_lists_are_the_points(clients: list[int]) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = run_cli(["run", "tpcb", *TARGET, "-c", ",".join(map(str, clients)), "--dry-run"])
    assert code == 0
    assert f"points: {len(clients)};" in out.getvalue()
