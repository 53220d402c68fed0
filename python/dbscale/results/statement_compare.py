"""`compare --statements`: which statement made the difference. For each statement on both sides
of a point (matched by fingerprint): the ratio B/A of its mean server time per call, and of its
rows, blocks read and WAL (PostgreSQL) or rows examined (MySQL) per call, each the ratio of the
medians over the runs with a percentile bootstrap interval; and its share of the change of the
server's time per transaction, which orders the rows, so the answer reads "this statement is
3.1x slower [2.8x, 3.4x] and accounts for 85% of the change".

A statement's server time per transaction in a run is its total time over the run's committed
transactions; the change is median(B) - median(A) of it, and its share is that over the same
change of the sum over all statements (so shares add up to 100% when every statement is seen).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from dbscale.observe.statements import StatementFigures
from dbscale.results.record import RunRecord
from dbscale.results.text_tables import text_table
from dbscale.stats.comparison import median_ratio_interval

SERVER, CLIENT = "server", "client"
MATERIAL = 0.05  # a change of server time per transaction below 5% of A's is not shared out
PER_CALL = (
    "rows",
    "shared_blks_hit",
    "shared_blks_read",
    "wal_bytes",
    "rows_examined",
    "temp_blks_written",
)


class Ratio(BaseModel):
    """B/A of the medians over runs, with its interval (None: too few runs or zeros)."""

    model_config = ConfigDict(frozen=True)

    a: float | None = None
    b: float | None = None
    ratio: float | None = None
    low: float | None = None
    high: float | None = None


class StatementChange(BaseModel):
    model_config = ConfigDict(frozen=True)

    fingerprint: str
    text: str
    calls_per_txn_a: float | None = None
    calls_per_txn_b: float | None = None
    mean_ms: Ratio = Field(default_factory=Ratio)  # the server's time per call
    client_mean_ms: Ratio = Field(default_factory=Ratio)  # the clients' time per call
    per_call: dict[str, Ratio] = Field(default_factory=dict)
    ms_per_txn_a: float = 0.0  # per committed transaction, on the point's basis
    ms_per_txn_b: float = 0.0
    plan_a: str | None = None  # the plan's shape on each side (statements.explain), when kept
    plan_b: str | None = None
    share_pct: float | None = None  # of the change of the server's time per transaction


class PointStatements(BaseModel):
    model_config = ConfigDict(frozen=True)

    point: str
    runs_a: int
    runs_b: int
    basis: str = SERVER  # whose time the shares are of: the server's or the clients'
    ms_per_txn_a: float | None = None  # all statements' time per transaction
    ms_per_txn_b: float | None = None
    statements: list[StatementChange] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)  # runs whose figures could not be read


def _runs_with_figures(records: Sequence[RunRecord]) -> tuple[list[RunRecord], list[str]]:
    kept, flags = [], []
    for record in records:
        section = record.observe.statements if record.observe is not None else None
        if section is None:
            continue
        if section.flag is not None:
            flags.append(section.flag)
        elif record.transactions > 0:
            kept.append(record)
    return kept, sorted(set(flags))


def _figures(record: RunRecord) -> dict[str, StatementFigures]:
    assert record.observe is not None and record.observe.statements is not None
    return record.observe.statements.by_fingerprint()


def _ratio(a: Sequence[float], b: Sequence[float]) -> Ratio:
    if not a or not b:
        return Ratio()
    ma, mb = statistics.median(a), statistics.median(b)
    interval = median_ratio_interval(a, b)
    if interval is None:
        return Ratio(a=ma, b=mb, ratio=mb / ma if ma > 0 else None)
    change, low, high = interval
    return Ratio(a=ma, b=mb, ratio=1.0 + change, low=1.0 + low, high=1.0 + high)


def _per_txn(record: RunRecord, figures: StatementFigures | None, basis: str) -> float:
    """A statement's time per committed transaction in a run: the server's, or the client's."""
    if figures is None:
        return 0.0
    if basis == CLIENT:
        client = figures.client
        total = (client.mean_ms or 0.0) * client.count if client is not None else 0.0
        return total / record.transactions
    return figures.total_ms / record.transactions


def _values(records: Sequence[RunRecord], fingerprint: str, read: str) -> list[float]:
    out = []
    for record in records:
        figures = _figures(record).get(fingerprint)
        if figures is None:
            continue
        if read == "calls_per_txn":
            out.append(figures.calls / record.transactions)
        elif read == "client_mean_ms":
            if figures.client is not None and figures.client.mean_ms is not None:
                out.append(figures.client.mean_ms)
        else:
            value = figures.per_call(read)
            if value is not None:
                out.append(value)
    return out


def _plan(records: Sequence[RunRecord], fingerprint: str) -> str | None:
    """The shape most of the side's runs planned the statement with."""
    shapes = [f.plan_shape for r in records if (f := _figures(r).get(fingerprint)) and f.plan_shape]
    return Counter(shapes).most_common(1)[0][0] if shapes else None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _basis(records: Sequence[RunRecord]) -> str:
    """The client's time when the clients timed every statement of every run (it holds what
    the server's leaves out: the network, queueing, the commit's flush), else the server's."""
    every = all(f.client is not None for r in records for f in _figures(r).values())
    return CLIENT if records and every else SERVER


def compare_statements(
    point: str, records_a: Sequence[RunRecord], records_b: Sequence[RunRecord]
) -> PointStatements:
    a, flags_a = _runs_with_figures(records_a)
    b, flags_b = _runs_with_figures(records_b)
    basis = _basis([*a, *b])
    texts: dict[str, str] = {}
    for record in (*a, *b):
        for fp, figures in _figures(record).items():
            texts.setdefault(fp, figures.text)

    def per_txn(records: Sequence[RunRecord], fp: str) -> float:
        return statistics.median([_per_txn(r, _figures(r).get(fp), basis) for r in records])

    total_a = [sum(_per_txn(r, f, basis) for f in _figures(r).values()) for r in a]
    total_b = [sum(_per_txn(r, f, basis) for f in _figures(r).values()) for r in b]
    change_total = (
        statistics.median(total_b) - statistics.median(total_a) if total_a and total_b else None
    )
    if change_total is not None and abs(change_total) < MATERIAL * statistics.median(total_a):
        change_total = None  # no change to share out
    changes = []
    for fp, text in texts.items():
        per_txn_a = per_txn(a, fp) if a else 0.0
        per_txn_b = per_txn(b, fp) if b else 0.0
        per_call = {
            name: _ratio(_values(a, fp, name), _values(b, fp, name))
            for name in PER_CALL
            if any(_values(side, fp, name) for side in (a, b))
        }
        changes.append(
            StatementChange(
                fingerprint=fp,
                text=text,
                calls_per_txn_a=_median(_values(a, fp, "calls_per_txn")),
                calls_per_txn_b=_median(_values(b, fp, "calls_per_txn")),
                mean_ms=_ratio(_values(a, fp, "mean_ms"), _values(b, fp, "mean_ms")),
                client_mean_ms=_ratio(
                    _values(a, fp, "client_mean_ms"), _values(b, fp, "client_mean_ms")
                ),
                per_call=per_call,
                ms_per_txn_a=round(per_txn_a, 6),
                ms_per_txn_b=round(per_txn_b, 6),
                plan_a=_plan(a, fp),
                plan_b=_plan(b, fp),
                share_pct=(
                    round(100.0 * (per_txn_b - per_txn_a) / change_total, 1)
                    if change_total
                    else None
                ),
            )
        )
    changes.sort(key=lambda c: -abs(c.ms_per_txn_b - c.ms_per_txn_a))
    return PointStatements(
        point=point,
        runs_a=len(a),
        runs_b=len(b),
        basis=basis,
        ms_per_txn_a=_median(total_a),
        ms_per_txn_b=_median(total_b),
        statements=changes,
        flags=sorted(set(flags_a) | set(flags_b)),
    )


def _x(ratio: Ratio) -> str:
    if ratio.ratio is None:
        return "-"
    if ratio.low is None or ratio.high is None:
        return f"{ratio.ratio:.2f}x"
    return f"{ratio.ratio:.2f}x [{ratio.low:.2f}, {ratio.high:.2f}]"


def _excludes_one(ratio: Ratio) -> bool:
    """A per-call ratio worth showing: its interval lies wholly above or below 1."""
    if ratio.low is None or ratio.high is None:
        return False
    return ratio.low > 1.0 or ratio.high < 1.0


def _calls(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def print_statement_changes(
    console: Console, points: Sequence[PointStatements], top: int = 10
) -> None:
    """Per point, the statements ordered by their part in the change of server time."""
    for point in points:
        if point.flags:
            for flag in point.flags:
                console.print(f"{point.point}: {flag}", highlight=False, soft_wrap=True)
        if not point.statements:
            if not point.flags:
                console.print(f"{point.point}: no statement figures in these runs",
                              highlight=False)  # fmt: skip
            continue
        title = (
            f"statements, {point.point}: {point.basis} ms per transaction "
            f"{_num(point.ms_per_txn_a)} -> {_num(point.ms_per_txn_b)} "
            f"(runs {point.runs_a}/{point.runs_b})"
        )
        table = text_table(
            ("statement", "calls/txn A", "calls/txn B", "server ms/call B/A [95% CI]",
             "client ms/call B/A", "ms/txn A", "ms/txn B", "share", "per call B/A"),
            left={"statement", "per call B/A"},
            title=title,
        )  # fmt: skip
        for change in point.statements[:top]:
            per_call = ", ".join(
                f"{name} {_x(ratio)}"
                for name, ratio in change.per_call.items()
                if _excludes_one(ratio)
            )
            table.add_row(
                f"{change.text[:60]} ({change.fingerprint})",
                _calls(change.calls_per_txn_a),
                _calls(change.calls_per_txn_b),
                _x(change.mean_ms),
                _x(change.client_mean_ms),
                f"{change.ms_per_txn_a:.4f}",
                f"{change.ms_per_txn_b:.4f}",
                "-" if change.share_pct is None else f"{change.share_pct:.0f}%",
                per_call or "-",
            )
        console.print(table)
        for change in point.statements:
            if change.plan_a and change.plan_b and change.plan_a != change.plan_b:
                console.print(
                    f"plan changed, {change.text[:60]} ({change.fingerprint}):\n"
                    f"  A: {change.plan_a}\n  B: {change.plan_b}",
                    highlight=False,
                    soft_wrap=True,
                    markup=False,
                )
    console.print(
        "statements: the server's own figures over each measured window and the clients' "
        "timing of each statement, matched by fingerprint; ratios of medians over runs with "
        "bootstrap intervals; share: of the change of time per committed transaction (the "
        "clients' when they timed every statement, else the server's; shown when it changed "
        "by 5% or more); per call: the server's counters whose interval excludes 1",
        highlight=False,
        soft_wrap=True,
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"
