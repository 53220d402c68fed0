"""The set-up commands a newcomer types first say what they do while they do it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _dry_run(target: str) -> str:
    done = subprocess.run(
        ["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True,
        timeout=60,
    )  # fmt: skip
    return done.stdout


def test_the_build_announces_itself_and_shows_cargos_progress() -> None:
    commands = _dry_run("build")
    assert "the first build takes most of a fresh make demo" in commands
    [maturin] = [line for line in commands.splitlines() if "maturin develop" in line]
    assert "--quiet" not in maturin  # cargo's Compiling lines are the progress


def test_the_readme_says_how_long_the_first_build_takes_and_where_dbscale_is() -> None:
    readme = (ROOT / "README.md").read_text()
    head = readme[: readme.index("## ", readme.index("make test"))]
    assert "make demo" in head and "make test" in head
    assert ".venv/bin" in head
    assert "minutes" in head
