"""The record's `observe.statements`: what each statement cost the server over the measured
window, from two snapshots of its statement figures (statement_sources.py) differenced by entry,
never reset. dbscale's own monitoring statements (the observer's queries of catalogs and
statistics views) are summed apart, as is every other database's and user's activity.

Each statement carries a `fingerprint` (a hash of its text with every constant and parameter as
`?`), the same on every server and in every study, which compare, rank and history name it by
(`stmt:<fingerprint>.mean_ms`). A statement of a pgbench-style script is joined to its client-side
figures (the `commands` of the run's result) by the same normalized text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from dbscale.observe.statement_sources import Entry, Key, StatementSnapshot, entry_id

TOP_STATEMENTS = 50  # kept per run by total time; the rest summed in `rest`
TEXT_CHARS = 400
_MONITORING = re.compile(
    r"\b(pg_stat_\w+|pg_catalog\.|pg_settings|pg_backend_pid|pg_current_wal_lsn|pg_database|"
    r"pg_is_in_recovery|performance_schema|information_schema|current_setting|pg_extension)\b"
    r"|@@|^\s*show\s",
    re.IGNORECASE,
)
_PARAMETER = re.compile(r"\$\d+|(?<![\w:]):[A-Za-z_]\w*|\?")
_NUMBER = re.compile(r"(?<![\w$.])[-+]?\d+(\.\d+)?(?![\w.])")
_STRING = re.compile(r"'(?:[^']|'')*'")


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ClientSide(_Part):
    """The statement as dbscale's clients timed it (a built-in's statement under statement
    timing, or a script command: pgbench `-r`), from sending it to its whole answer."""

    command: str
    name: str | None = None  # the workload's name for it
    count: int
    mean_ms: float | None = None
    max_ms: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    failures: int = 0
    gap_ms: float | None = None  # client mean - server mean: network, queueing, the commit


class StatementFigures(_Part):
    """One statement's figures over the window: calls, server time, rows, and the server's
    own counters (PostgreSQL: blocks and WAL; MySQL: rows examined, lock time, temp tables)."""

    fingerprint: str
    id: str
    text: str = ""
    calls: int = 0
    total_ms: float = 0.0
    mean_ms: float | None = None
    rows: int = 0
    counters: dict[str, float] = Field(default_factory=dict)
    toplevel: bool | None = None
    client: ClientSide | None = None
    plan_shape: str | None = None  # statements.explain: nodes, tables, indexes in one line
    plan: str | None = None  # ... and the plan itself (EXPLAIN's JSON)

    def per_call(self, name: str) -> float | None:
        """`mean_ms`, `rows`, or a counter, per call."""
        if name == "mean_ms":
            return self.mean_ms
        value = float(self.rows) if name == "rows" else self.counters.get(name)
        return None if value is None or self.calls <= 0 else value / self.calls


class Totals(_Part):
    statements: int = 0
    calls: int = 0
    total_ms: float = 0.0


class StatementsRecord(_Part):
    """Statement figures of one run (docs/statements.md)."""

    source: str
    from_s: float | None = None  # the first snapshot, seconds from the measured start
    to_s: float | None = None  # the last one
    statements: list[StatementFigures] = Field(default_factory=list)
    rest: Totals | None = None  # the run's own statements past the top ones
    monitoring: Totals = Field(default_factory=Totals)  # catalog and statistics queries
    other: Totals = Field(default_factory=Totals)  # other databases and users
    evicted: int | None = None  # entries the server dropped during the window
    flag: str | None = None  # what to enable when the figures could not be read
    notes: list[str] = Field(default_factory=list)

    def by_fingerprint(self) -> dict[str, StatementFigures]:
        return {s.fingerprint: s for s in self.statements}


def normalized(text: str) -> str:
    """Text with constants and parameters as `?`, one space between words, lower case."""
    text = _STRING.sub("?", text).replace("`", "")
    text = _PARAMETER.sub("?", text)
    text = _NUMBER.sub("?", text)
    text = re.sub(r"\(\s*\?\s*\)", "?", text)  # a parameter the server wrapped: `+ ($1)`
    text = re.sub(r"\(\s*\?(\s*,\s*\?)+\s*\)", "(...)", text)  # a list, as digests show it
    text = re.sub(r"\bdistinctrow\b", "distinct", text, flags=re.IGNORECASE)
    text = re.sub(r"\s*([(),=+\-*/<>])\s*", r"\1", text)
    return " ".join(text.split()).rstrip(";").strip().lower()


def fingerprint(text: str) -> str:
    return hashlib.sha1(normalized(text).encode()).hexdigest()[:12]


def is_monitoring(text: str) -> bool:
    return bool(_MONITORING.search(text))


def _delta(first: Entry | None, last: Entry) -> tuple[Entry, bool]:
    """`last - first`; an entry whose calls went back (evicted, then seen again) counts from 0
    and says so."""
    if first is None:
        return last, False
    if last.calls < first.calls:
        return last, True
    counters = {
        name: max(value - first.counters.get(name, 0.0), 0.0)
        for name, value in last.counters.items()
    }
    return Entry(
        last.calls - first.calls, last.total_ms - first.total_ms, last.rows - first.rows, counters
    ), False


def moved(first: StatementSnapshot, last: StatementSnapshot) -> dict[Key, Entry]:
    """The run's entries that ran during the window, with their deltas."""
    out: dict[Key, Entry] = {}
    for key, entry in last.ours.items():
        delta, _ = _delta(first.ours.get(key), entry)
        if delta.calls > 0:
            out[key] = delta
    return out


def _figures(key: Key, entry: Entry, text: str) -> StatementFigures:
    calls = round(entry.calls)
    toplevel = {"true": True, "false": False}.get(key[3].lower()) if len(key) > 3 else None
    return StatementFigures(
        fingerprint=fingerprint(text) if text else key[-1][:12],
        id=entry_id(key),
        text=" ".join(text.split())[:TEXT_CHARS],
        calls=calls,
        total_ms=round(entry.total_ms, 3),
        mean_ms=round(entry.total_ms / calls, 4) if calls else None,
        rows=round(entry.rows),
        counters={k: round(v, 3) for k, v in entry.counters.items()},
        toplevel=toplevel,
    )


def statements_record(
    source: str,
    first: StatementSnapshot,
    last: StatementSnapshot,
    texts: dict[str, str],
    window: tuple[float | None, float | None],
    clients: Sequence[ClientSide] = (),
    plans: Mapping[str, tuple[str, str]] | None = None,
) -> StatementsRecord:
    """The record from the two snapshots and the texts (by id) of the entries that moved."""
    deltas = moved(first, last)
    reset = sum(1 for k, e in last.ours.items() if _delta(first.ours.get(k), e)[1])
    ours: list[StatementFigures] = []
    monitoring = Totals()
    for key, entry in deltas.items():
        text = texts.get(entry_id(key), "")
        if text and is_monitoring(text):
            monitoring = _add(monitoring, entry)
            continue
        ours.append(_figures(key, entry, text))
    ours = _merge_same_fingerprint(ours)
    ours.sort(key=lambda s: -s.total_ms)
    kept, past = ours[:TOP_STATEMENTS], ours[TOP_STATEMENTS:]
    rest = None
    if past:
        rest = Totals(
            statements=len(past),
            calls=sum(s.calls for s in past),
            total_ms=round(sum(s.total_ms for s in past), 3),
        )
    other, _ = _delta(first.other, last.other)
    notes = []
    if reset:
        notes.append(f"{reset} statement entries were reset during the window: counted from 0")
    evicted = None
    if first.evicted is not None and last.evicted is not None:
        evicted = max(round(last.evicted - first.evicted), 0)
        if evicted:
            notes.append(
                f"the server dropped {evicted} statement entries for want of room: raise "
                "pg_stat_statements.max; the figures may miss statements"
            )
    if first.executions is not None and last.executions is not None:
        hidden = round(last.executions - first.executions)
        # A server that also keeps their digests (MySQL 8) shows at least as many calls.
        if hidden > 0 and sum(s.calls for s in ours) < hidden:
            notes.append(
                f"{hidden} executions of prepared statements are not in the figures: this "
                "server's performance_schema keeps no digest for them (statement/com/Execute); "
                "--protocol simple gives each statement's figures"
            )
    if (last.overflow or 0.0) > (first.overflow or 0.0):
        notes.append(
            "performance_schema's digest table is full (calls under the NULL digest): raise "
            "performance_schema_digests_size"
        )
    if plans:
        kept = [
            s.model_copy(
                update={"plan": plans[s.fingerprint][0], "plan_shape": plans[s.fingerprint][1]}
            )
            if s.fingerprint in plans
            else s
            for s in kept
        ]
    return StatementsRecord(
        source=source,
        from_s=window[0],
        to_s=window[1],
        statements=join_clients(kept, clients),
        rest=rest,
        monitoring=monitoring,
        other=Totals(calls=round(other.calls), total_ms=round(other.total_ms, 3)),
        evicted=evicted,
        notes=notes,
    )


def _add(totals: Totals, entry: Entry) -> Totals:
    return Totals(
        statements=totals.statements + 1,
        calls=totals.calls + round(entry.calls),
        total_ms=round(totals.total_ms + entry.total_ms, 3),
    )


def _merge_same_fingerprint(figures: list[StatementFigures]) -> list[StatementFigures]:
    """Entries of one text under several keys (a nested and a top-level call, two users' of a
    scaled-out run) become one statement."""
    merged: dict[str, StatementFigures] = {}
    for item in figures:
        seen = merged.get(item.fingerprint)
        if seen is None:
            merged[item.fingerprint] = item
            continue
        calls = seen.calls + item.calls
        total = round(seen.total_ms + item.total_ms, 3)
        counters = dict(seen.counters)
        for name, value in item.counters.items():
            counters[name] = round(counters.get(name, 0.0) + value, 3)
        merged[item.fingerprint] = seen.model_copy(
            update={
                "calls": calls,
                "total_ms": total,
                "mean_ms": round(total / calls, 4) if calls else None,
                "rows": seen.rows + item.rows,
                "counters": counters,
                "toplevel": seen.toplevel if seen.toplevel == item.toplevel else None,
            }
        )
    return list(merged.values())


def join_clients(
    figures: list[StatementFigures], clients: Sequence[ClientSide]
) -> list[StatementFigures]:
    """Each statement with the client's figures of the command of the same normalized text."""
    if not clients:
        return figures
    by_text = {fingerprint(c.command): c for c in clients}
    joined = []
    for item in figures:
        client = by_text.get(item.fingerprint)
        if client is not None:
            gap = None
            if client.mean_ms is not None and item.mean_ms is not None:
                gap = round(client.mean_ms - item.mean_ms, 4)
            item = item.model_copy(update={"client": client.model_copy(update={"gap_ms": gap})})
        joined.append(item)
    return joined
