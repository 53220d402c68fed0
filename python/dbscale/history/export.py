"""The store's rows as CSV or NDJSON (one JSON object a line, as `bq load` and pandas read it),
with each run's exclusion marked."""

from __future__ import annotations

import csv
import io
import json

from dbscale.errors import ConfigError
from dbscale.history.rows import COLUMNS
from dbscale.history.store import HistoryStore

FORMATS = ("csv", "ndjson")


def export_rows(store: HistoryStore, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r} is not known", "csv or ndjson")
    reasons = {e.run_id: e.reason for e in store.exclusions()}
    rows = [{**r.to_json(), "excluded": r.run_id in reasons,
             "exclude_reason": reasons.get(r.run_id, "")} for r in store.rows()]  # fmt: skip
    if fmt == "ndjson":
        return "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[*COLUMNS, "excluded", "exclude_reason"],
                            lineterminator="\n")  # fmt: skip
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
