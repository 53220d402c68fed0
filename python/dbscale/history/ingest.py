"""`dbscale history add DIR... --label k=v`: the studies' measured runs as one ingest: a row per
run and metric, and a point per series and metric (the median of this ingest's runs). A run
already in the store is not added again (said, not silently doubled)."""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from dbscale.errors import ConfigError
from dbscale.history.rows import POINT, RUN, HistoryRow, labels_text, point_figures
from dbscale.history.store import HistoryStore
from dbscale.results.measurements import ALL_MICRO, Measurement, collect_measurements
from dbscale.results.metrics import ALL_STATEMENTS, METRICS, metric_named

INGEST_ID_LENGTH = 12
AUTOMATIC_LABELS = ("server_version",)  # where facts that label a point unless --label does


@dataclass
class Ingest:
    ingest_id: str
    rows: list[HistoryRow] = field(default_factory=list)
    already: dict[str, set[str]] = field(default_factory=dict)  # study -> runs already stored
    left_out: dict[str, int] = field(default_factory=dict)  # reason -> runs
    path: Path | None = None

    @property
    def runs(self) -> int:
        return len({r.run_id for r in self.rows if r.kind == RUN})

    @property
    def series(self) -> int:
        return len({r.series_key for r in self.rows})


# A label names what changed (version=16.4, commit=abc123): a word, and a value of one line.
LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", re.ASCII)
MAX_LABEL_VALUE = 200
MAX_LABELS = 20


def parse_labels(pairs: Sequence[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    example = "e.g. --label version=16.4 --label commit=abc123"
    for pair in pairs:
        name, equals, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name:
            raise ConfigError(f"--label {pair[:80]!r} is not NAME=VALUE", example)
        if not LABEL_NAME.fullmatch(name):
            raise ConfigError(f"--label name {name[:80]!r} is not a word of up to 64 letters, "
                              "digits, _, . or -", example)  # fmt: skip
        if len(value) > MAX_LABEL_VALUE or any(not c.isprintable() for c in value):
            raise ConfigError(f"--label {name}: its value must be one line of at most "
                              f"{MAX_LABEL_VALUE} printable characters", example)  # fmt: skip
        labels[name] = value
    if len(labels) > MAX_LABELS:
        raise ConfigError(f"{len(labels)} labels: at most {MAX_LABELS}", example)
    return labels


def _row(m: Measurement, ingest: str, at: str, labels: Mapping[str, str]) -> HistoryRow:
    known = metric_named(m.metric)
    higher = known.higher_is_better if known is not None else True
    return HistoryRow(
        ingest_id=ingest, ingested_at=at, kind=RUN, series_key=m.series_key, series=m.series,
        target_key=m.target_key, target=m.target, labels=labels_text(labels), study=m.study,
        point_key=m.point_key, run_id=m.run_id, time=m.time, metric=m.metric, value=m.value,
        unit=m.unit, higher_is_better=higher, n=1, ci_low=None, ci_high=None,
    )  # fmt: skip


def point_row(runs: Sequence[HistoryRow]) -> HistoryRow:
    """A series' point from its runs in one ingest (also after an exclusion, from those left)."""
    first = runs[0]
    median, low, high = point_figures([r.value for r in runs])
    studies = ",".join(sorted({r.study for r in runs}))
    return replace(
        first, kind=POINT, run_id="", study=studies, time=min(r.time for r in runs),
        value=median, n=len(runs), ci_low=low, ci_high=high,
    )  # fmt: skip


def build_ingest(
    directories: Sequence[Path], labels: Mapping[str, str], now: datetime, known_runs: set[str]
) -> Ingest:
    ingest = Ingest(uuid.uuid4().hex[:INGEST_ID_LENGTH])
    at = now.isoformat(timespec="seconds").replace("+00:00", "Z")
    for directory in directories:
        found = collect_measurements(directory, [*METRICS, ALL_MICRO, ALL_STATEMENTS])
        reasons = {(x.run_id, x.reason) for x in found.left_out if not x.reason.startswith("no ")}
        for _run, reason in reasons:
            ingest.left_out[reason] = ingest.left_out.get(reason, 0) + 1
        for m in found.items:
            if m.run_id in known_runs:
                ingest.already.setdefault(m.study, set()).add(m.run_id)
                continue
            point_labels = {k: m.where[k] for k in AUTOMATIC_LABELS if k in m.where}
            ingest.rows.append(_row(m, ingest.ingest_id, at, {**point_labels, **labels}))
    groups: dict[tuple[str, str], list[HistoryRow]] = defaultdict(list)
    for row in ingest.rows:
        groups[(row.series_key, row.metric)].append(row)
    ingest.rows += [point_row(runs) for runs in groups.values()]
    return ingest


def add_to_history(
    store: HistoryStore, directories: Sequence[Path], labels: Mapping[str, str], now: datetime
) -> Ingest:
    with store.locked():  # the runs already stored, read and added to in one step
        ingest = build_ingest(directories, labels, now, store.run_ids())
        if ingest.rows:
            ingest.path = store.add(ingest.rows)
    return ingest
