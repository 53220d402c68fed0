"""The store's rows as CSV or NDJSON (one JSON object a line, as `bq load` and pandas read it),
with each run's exclusion marked."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import types
import typing

from dbscale.errors import ConfigError
from dbscale.history.rows import COLUMNS, HistoryRow
from dbscale.history.store import HistoryStore

FORMATS = ("csv", "ndjson")
HISTORY_SCHEMA_VERSION = 1  # an NDJSON row's shape (schemas/history-row.schema.json)


def export_rows(store: HistoryStore, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r} is not known", "csv or ndjson")
    reasons = {e.run_id: e.reason for e in store.exclusions()}
    rows = [{**r.to_json(), "excluded": r.run_id in reasons,
             "exclude_reason": reasons.get(r.run_id, "")} for r in store.rows()]  # fmt: skip
    if fmt == "ndjson":
        return "".join(json.dumps({"schema_version": HISTORY_SCHEMA_VERSION, **row},
                                  separators=(",", ":")) + "\n" for row in rows)  # fmt: skip
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[*COLUMNS, "excluded", "exclude_reason"],
                            lineterminator="\n")  # fmt: skip
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


_BQ_TYPES = {str: "STRING", float: "FLOAT64", int: "INT64", bool: "BOOL"}
# What the export adds to each store row (NDJSON: all three; CSV: the last two).
EXPORT_FIELDS = (("schema_version", int), ("excluded", bool), ("exclude_reason", str))


def bq_schema() -> list[dict[str, str]]:
    """The BigQuery schema of the NDJSON rows (`bq load --source_format=NEWLINE_DELIMITED_JSON
    TABLE rows.ndjson schema.json`): a field per column, REQUIRED unless it may be null."""
    hints = typing.get_type_hints(HistoryRow)
    fields = []
    for field in dataclasses.fields(HistoryRow):
        hint = hints[field.name]
        nullable = isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)
        base = next(a for a in typing.get_args(hint) if a is not type(None)) if nullable else hint
        fields.append({"name": field.name, "type": _BQ_TYPES[base],
                       "mode": "NULLABLE" if nullable else "REQUIRED"})  # fmt: skip
    fields += [{"name": name, "type": _BQ_TYPES[kind], "mode": "REQUIRED"}
               for name, kind in EXPORT_FIELDS]  # fmt: skip
    return fields


def bq_schema_text() -> str:
    return json.dumps(bq_schema(), indent=2) + "\n"
