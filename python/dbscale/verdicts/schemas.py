"""The published JSON Schemas of what dbscale writes, generated from the models that read and
write each file, so the schemas and the code cannot drift (a test compares them with the files
committed under `schemas/`, and validates real files written by the tests):

- `runs.schema.json`: one line of runs.jsonl (results/record.py's RunRecord);
- `summary.schema.json`: summary.json (results/summary_file.py);
- `capacity.schema.json`: capacity.json (results/capacity_file.py);
- `thresholds.schema.json`: thresholds.json (verdicts/thresholds_file.py);
- `history-row.schema.json`: one row of `dbscale history export --format ndjson`.

Each file carries its `schema_version` (an integer raised when a field changes meaning or goes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from dbscale.files import write_atomic
from dbscale.history.export import HISTORY_SCHEMA_VERSION
from dbscale.history.rows import HistoryRow
from dbscale.results.capacity_file import CAPACITY_SCHEMA_VERSION, CapacityStudy
from dbscale.results.directory import SUMMARY_SCHEMA_VERSION
from dbscale.results.record import RUNS_SCHEMA_VERSION, RunRecord
from dbscale.results.summary_file import SummaryFile
from dbscale.verdicts.thresholds_file import THRESHOLDS_SCHEMA_VERSION, ThresholdsFile

BASE_ID = "https://dbscale.dev/schemas/"


class HistoryExportRow(BaseModel):
    """A row of `history export --format ndjson`: the store's row, its exclusion, the version."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    excluded: bool
    exclude_reason: str


def _history_row() -> dict[str, Any]:
    row = TypeAdapter(HistoryRow).json_schema()
    extra = HistoryExportRow.model_json_schema()
    row["properties"].update(extra["properties"])
    row["required"] = [*row.get("required", []), *extra["required"]]
    row["title"] = "HistoryExportRow"
    return row


SCHEMAS: dict[str, tuple[int, Any]] = {
    "runs": (RUNS_SCHEMA_VERSION, RunRecord),
    "summary": (SUMMARY_SCHEMA_VERSION, SummaryFile),
    "capacity": (CAPACITY_SCHEMA_VERSION, CapacityStudy),
    "thresholds": (THRESHOLDS_SCHEMA_VERSION, ThresholdsFile),
    "history-row": (HISTORY_SCHEMA_VERSION, None),
}


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one published file."""
    version, model = SCHEMAS[name]
    body = _history_row() if model is None else model.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE_ID}{name}-v{version}.schema.json",
        "description": (body.pop("description", "") or "").strip(),
        "x-schema-version": version,
        **body,
    }


def schema_text(name: str) -> str:
    return json.dumps(schema(name), indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMAS:
        path = directory / f"{name}.schema.json"
        write_atomic(path, schema_text(name))
        written.append(path)
    return written
