"""End-to-end helpers: the `dbscale` command run as a subprocess (real exit codes, real stdout and
stderr) against the session's test PostgreSQL, with the native module built."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dbscale.cli.app import run_cli
from tests.conftest import REPO, PgTestServer, skip_or_fail
from tests.integration.browser import launched_browser
from tests.integration.mariadb import MariaDBTestServer, mariadb_from_env


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def assert_ok(self) -> None:
        assert self.code == 0, f"exit {self.code}\nstdout:\n{self.out}\nstderr:\n{self.err}"

    def assert_user_error(self) -> None:
        """Bad input: non-zero exit, an `error:` line, a `hint:` line, no traceback."""
        assert self.code != 0, self.text
        lines = self.err.strip().splitlines()
        errors = [line for line in lines if line.startswith("error: ")]
        hints = [line for line in lines if line.startswith("hint: ")]
        assert len(errors) == 1, self.err
        assert len(hints) == 1, self.err
        assert "Traceback" not in self.text


# Where the command runs unless a test says otherwise: a run without --out writes its results
# directory here, not into the checkout's results/.
_WORK_DIR = Path(tempfile.mkdtemp(prefix="dbscale-it-"))
_WORK_DIR.chmod(0o755)  # servers started from it run as another user when the tests are root
atexit.register(shutil.rmtree, _WORK_DIR, True)


def dbscale(
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 300,
    cwd: Path | None = None,
) -> Outcome:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    python_path = str(REPO / "python")
    base["PYTHONPATH"] = python_path + os.pathsep + base.get("PYTHONPATH", "")
    base["COLUMNS"] = "200"
    done = subprocess.run(
        [sys.executable, "-m", "dbscale", *args],
        capture_output=True, text=True, env={**base, **(env or {})}, timeout=timeout_s,
        cwd=cwd or _WORK_DIR, check=False,
    )  # fmt: skip
    return Outcome(done.returncode, done.stdout, done.stderr)


def in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    """`dbscale ARGV` in this process: the same exit code, stdout and stderr, no start-up cost."""
    code = run_cli(list(argv))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


@pytest.fixture(scope="module")
def mariadb(core: ModuleType) -> MariaDBTestServer:
    return mariadb_from_env()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for a module's pages (tests/integration/browser.py)."""
    yield from launched_browser()


@pytest.fixture(scope="session")
def live(test_pg: PgTestServer, core: ModuleType) -> PgTestServer:
    """The test server, when the native module is there too."""
    return test_pg


@pytest.fixture(scope="session")
def tpcb_url(live: PgTestServer) -> str:
    """A database holding TPC-B data at scale 1, loaded by `dbscale prepare`."""
    url = live.fresh_database("dbscale_tpcb")
    dbscale("prepare", "tpcb", "--target", url, "--set", "scale=1").assert_ok()
    return url


def read_runs(path: Path) -> list[dict[str, Any]]:
    """runs.jsonl as written on disk: one JSON object per line (what other tools read)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# A plan's local PostgreSQL in sizes of 1 and 2 vCPUs (a format string: `{dir}` from
# `local_sizes_dir`), as the size studies declare it.
LOCAL_SIZES_TARGET = """
  - name: pg
    url: local
    vcpus: [1, 2]
    memory_gib_per_vcpu: 0.5
    storage_gb: 10
    local: {{dir: {dir}, settings: {{fsync: off}}}}"""


def local_sizes_dir(name: str) -> Path:
    """A directory for a local server in sizes of 1 and 2 CPUs (under /var/tmp: a path short
    enough for its Unix socket); skips (fails in CI) without PostgreSQL's server programs,
    skips on a machine with fewer than 2 CPUs."""
    from dbscale.targets.local.binaries import find_postgres_binaries

    try:
        find_postgres_binaries()
    except Exception as exc:
        skip_or_fail(f"no PostgreSQL server programs: {exc}")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    return Path("/var/tmp") / f"dbscale-test-{name}-{os.getpid()}"
