"""Fixtures for the report tests: a results directory written from synthetic records, and one
cache directory for the bundled charting library (building it takes seconds)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

WriteDir = Callable[[Sequence[dict[str, Any]]], Path]


@pytest.fixture(scope="session")
def bundle_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vega-bundle")


@pytest.fixture
def results_dir(tmp_path: Path) -> WriteDir:
    """Writes records as runs.jsonl into a fresh directory and returns it."""

    def write(records: Sequence[dict[str, Any]]) -> Path:
        directory = tmp_path / "results"
        directory.mkdir(exist_ok=True)
        lines = "".join(json.dumps(r) + "\n" for r in records)
        (directory / "runs.jsonl").write_text(lines, encoding="utf-8")
        return directory

    return write
