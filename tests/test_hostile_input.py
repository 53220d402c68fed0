"""Hostile input, fuzzed (hypothesis): script files (nesting, sizes, binary), plan documents
(depth, anchors and aliases, sizes) and runs files (garbage, nesting, mangled records). Whatever
comes in, dbscale accepts it or refuses it with one `error:` line, one `hint:` line and a
documented exit code: never a traceback, never exit 70, never a signal death, never a hang past
its bound, never memory past its bound. Script and plan cases go through `run --dry-run`
(nothing runs); runs files through `compare` and `run --resume --dry-run`. The large inputs run
in a child process under a memory limit and a timeout."""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbscale.cli.app import run_cli
from tests.conftest import REPO
from tests.test_properties import DOCUMENTED, assert_accepted_or_refused

TARGET = ("--target", "postgresql://bench@127.0.0.1:1/bench")
EXAMPLES = {"script": 200, "plan": 150, "runs": 100}  # the closing note quotes these counts
SECONDS_PER_INPUT = 5.0  # the bound on any one input's handling


def fuzz(kind: str) -> settings:
    return settings(
        max_examples=EXAMPLES[kind], deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.data_too_large],
    )  # fmt: skip


def dbscale_here(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = run_cli(list(argv))
    took = time.monotonic() - started
    assert took < SECONDS_PER_INPUT, f"{took:.1f} s for one input"
    return code, err.getvalue()


# -- scripts -----------------------------------------------------------------------------------

pieces = st.sampled_from([
    "\\set x ", "\\set ", "\\if ", "\\elif ", "\\else", "\\endif", "\\sleep ", "\\gset",
    "\\aset", "\\shell ", "\\setshell v ", "\\startpipeline", "\\endpipeline", "\\", "(", ")",
    "abs(", "least(", "-", "~", "not ", "+", "*", "/", "%", "<", "=", "1", "9223372036854775808",
    "1.5e308", "1e999", ".", ":x", ":", "::", ",", "case when ", " then ", " end", "true",
    "null", "SELECT 1", ";", "\\;", "'", '"', "$$", "$t$", "--", "/*", "*/", "\n", " ", "\t",
    "ms", "random(", "hash(", "permute(", "\u00e9", "\x00", "\x7f", "\ufffd",
])  # fmt: skip
script_text = st.one_of(
    st.lists(pieces, max_size=60).map("".join),
    st.text(max_size=200),
    st.builds(
        lambda opener, depth: f"\\set x {opener * depth}1{')' * depth if '(' in opener else ''}\n",
        st.sampled_from(["(", "abs(", "-", "~", "not ", "+"]),
        st.integers(0, 20_000),
    ),
    st.builds(lambda n: "\\if true\n" * n + "SELECT 1;\n" + "\\endif\n" * n, st.integers(0, 3000)),
)


@fuzz("script")
@given(text=script_text)
def test_script_text_is_accepted_or_refused(text: str, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.sql"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    assert_accepted_or_refused(*dbscale_here("run", f"script:{path}", *TARGET, "--dry-run"))


@fuzz("script")
@given(data=st.binary(max_size=400))
def test_binary_scripts_are_refused_or_read(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.sql"
    path.write_bytes(data)
    assert_accepted_or_refused(*dbscale_here("run", f"script:{path}", *TARGET, "--dry-run"))


# -- plans -------------------------------------------------------------------------------------


def _nested(kind: str, depth: int) -> str:
    if kind == "flow-list":
        return "[" * depth + "1" + "]" * depth
    if kind == "flow-map":
        return "{a: " * depth + "1" + "}" * depth
    lines = [" " * i + "k:" for i in range(depth)]  # block mappings, one level per line
    return "\n" + "\n".join(lines) + "\n" + " " * depth + "v: 1"


plan_text = st.one_of(
    st.builds(
        lambda key, kind, depth: f"workload: tpcb\n{key}: {_nested(kind, depth)}\n",
        st.sampled_from(["matrix", "load", "targets", "nonsense"]),
        st.sampled_from(["flow-list", "flow-map", "block"]),
        st.integers(0, 3000),
    ),
    st.builds(  # anchors and aliases, chained: a "billion laughs" shape
        lambda levels, width: (
            "workload: tpcb\n"
            + "".join(
                f"l{i}: &l{i} [{', '.join([f'*l{i - 1}' if i else '1'] * width)}]\n"
                for i in range(levels)
            )
        ),
        st.integers(1, 12),
        st.integers(1, 9),
    ),
    st.builds(
        lambda n, c: f"workload: tpcb\nname: {c * n}\n",
        st.integers(0, 200_000),
        st.sampled_from(["x", "\u00e9", " ", "#"]),
    ),
    st.lists(
        st.sampled_from(
            [
                "workload: tpcb",
                "matrix:",
                "  clients: [1, 2]",
                "- a",
                "  - b",
                "load: {duration: 1s}",
                "&a",
                "*a",
                "!!python/object:os.system",
                "? x",
                ": y",
                "---",
                "...",
                "%YAML 1.1",
                "'",
                '"',
                "\t",
                "{",
                "[",
            ]
        ),
        max_size=20,
    ).map("\n".join),
)


@fuzz("plan")
@given(text=plan_text)
def test_plan_documents_are_accepted_or_refused(text: str, tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    assert_accepted_or_refused(*dbscale_here("run", str(path), *TARGET, "--dry-run"))


# -- runs files --------------------------------------------------------------------------------

RECORD = {"run_id": "r1", "workload": "tpcb", "clients": 1, "duration_s": 1.0,
          "transactions": 10, "tps": 10.0, "verdict": {"status": "ok", "message": ""},
          "point_key": "clients=1", "repetition": 0}  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20,
)  # fmt: skip
runs_lines = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda d: ("[" * d + "]" * d).encode(), st.integers(0, 200_000)),
    st.builds(lambda d: ('{"a":' * d + "1" + "}" * d).encode(), st.integers(0, 50_000)),
    st.builds(  # a record with a field changed to anything
        lambda key, value: json.dumps({**RECORD, key: value}).encode(),
        st.sampled_from(
            [
                *RECORD,
                "intervals",
                "latency_ms",
                "histogram",
                "observe",
                "errors",
                "config",
                "commands",
                "outages",
                "stalls",
            ]
        ),
        json_values,
    ),
)


@fuzz("runs")
@given(lines=st.lists(runs_lines, min_size=1, max_size=4), torn=st.booleans())
def test_runs_files_are_read_or_refused(lines: list[bytes], torn: bool, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir(exist_ok=True)
    data = b"\n".join(lines) + (b"" if torn else b"\n")
    (results / "runs.jsonl").write_bytes(data)
    for argv in (("compare", str(results), str(results)),
                 ("run", "tpcb", *TARGET, "--resume", str(results), "--dry-run")):  # fmt: skip
        assert_accepted_or_refused(*dbscale_here(*argv))


# -- large inputs, in a child under a memory limit ---------------------------------------------

MEMORY_LIMIT = 2 << 30  # address space of the child: 2 GiB


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def dbscale_limited(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    return subprocess.run(
        [sys.executable, "-m", "dbscale", *argv], capture_output=True, text=True, env=env,
        timeout=60, preexec_fn=_limited, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("what", ["script", "plan", "runs"])
def test_huge_inputs_are_refused_within_memory_and_time(what: str, tmp_path: Path) -> None:
    huge = tmp_path / "huge"
    size = 50 << 20  # 50 MB
    if what == "script":
        huge.write_text("SELECT 1;\n" * (size // 10))
        argv = ["run", f"script:{huge}", *TARGET, "--dry-run"]
    elif what == "plan":
        huge.write_text("workload: tpcb\nname: " + "x" * size + "\n")
        argv = ["run", str(huge), *TARGET, "--dry-run"]
    else:
        huge.mkdir()
        (huge / "runs.jsonl").write_bytes(b"[" * size + b"\n")
        argv = ["compare", str(huge), str(huge)]
    started = time.monotonic()
    done = dbscale_limited(*argv)
    assert time.monotonic() - started < 30
    assert done.returncode in DOCUMENTED - {0}, (done.returncode, done.stderr[-500:])
    assert_accepted_or_refused(done.returncode, done.stderr)
