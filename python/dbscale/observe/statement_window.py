"""The two snapshots of a run's statement figures: the first when the measured window opens
(the run waits, connected, until it is taken), the last as soon as the run has ended; then the
texts of what moved. Reading them never fails the run: a server without the figures gives one
flag line saying what to enable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from dbscale.modes import Dialect
from dbscale.observe.session import one_line
from dbscale.observe.statement_plans import Plan, explain_all
from dbscale.observe.statement_sources import (
    MYSQL_CONSUMER_SQL,
    MYSQL_EXECUTIONS_SQL,
    MYSQL_SNAPSHOT_SQL,
    Key,
    StatementSnapshot,
    entry_id,
    flag_for,
    mysql_texts_sql,
    parse_mysql_snapshot,
    parse_pg_snapshot,
    pg_snapshot_sql,
    pg_texts_sql,
    source_of,
)
from dbscale.observe.statements import (
    ClientSide,
    StatementsRecord,
    is_monitoring,
    moved,
    statements_record,
)

PS_OFF = (
    "statement figures not read: performance_schema is OFF on the server; set "
    "performance_schema=ON in its configuration and restart it"
)
DIGESTS_OFF = (
    "statement figures not read: performance_schema's statements_digest consumer is off; "
    "UPDATE performance_schema.setup_consumers SET ENABLED='YES' WHERE NAME='statements_digest'"
)


class Rows(Protocol):
    """The observer's session (observe/session.py)."""

    def rows(self, sql: str) -> list[list[object]]: ...


class StatementWindow:
    """One run's statement snapshots; `record()` is None until both were taken or one failed."""

    def __init__(
        self,
        dialect: Dialect,
        version_num: int,
        performance_schema: bool,
        performance_schema_denied: bool = False,
        explain: bool = False,
    ) -> None:
        self.explain = explain
        self.plans: dict[str, Plan] = {}
        self.plan_failures: list[str] = []
        self.dialect = dialect
        self.version_num = version_num
        self.performance_schema = performance_schema
        self.database: str | None = None
        self.first: StatementSnapshot | None = None
        self.first_at: float | None = None
        self.last: StatementSnapshot | None = None
        self.last_at: float | None = None
        self.texts: dict[str, str] = {}
        self.flag: str | None = None
        if performance_schema_denied:
            self.flag = flag_for(dialect, "SELECT command denied on performance_schema")

    def _snapshot(self, session: Rows) -> StatementSnapshot:
        if self.dialect is Dialect.MYSQL:
            snapshot = parse_mysql_snapshot(session.rows(MYSQL_SNAPSHOT_SQL))
            executions = session.rows(MYSQL_EXECUTIONS_SQL)
            if executions:
                snapshot.executions = float(str(executions[0][0]))
            return snapshot
        [[text]] = session.rows(pg_snapshot_sql(self.version_num))
        return parse_pg_snapshot(str(text))

    def _readable(self, session: Rows) -> bool:
        if self.dialect is not Dialect.MYSQL:
            return True
        if self.flag is not None:
            return False
        if not self.performance_schema:
            self.flag = PS_OFF
            return False
        enabled = session.rows(MYSQL_CONSUMER_SQL)
        if enabled and str(enabled[0][0]).upper() != "YES":
            self.flag = DIGESTS_OFF
            return False
        return True

    def open(self, session: Rows | None) -> None:
        """The first snapshot (the measured window opens right after it); None: the observer's
        session is lost, so there is none."""
        if session is None:
            self.flag = "statement figures not read: the observer's session was lost"
            return
        try:
            if self.dialect is Dialect.POSTGRESQL:
                [[database]] = session.rows("SELECT current_database()")
                self.database = str(database)
            if self._readable(session):
                self.first = self._snapshot(session)
                self.first_at = time.monotonic()
        except Exception as exc:
            self.flag = flag_for(self.dialect, one_line(exc), self.database)

    def close(self, session: Rows) -> None:
        """The last snapshot and the texts of the entries that moved."""
        if self.first is None or self.last is not None:
            return
        try:
            self.last = self._snapshot(session)
            self.last_at = time.monotonic()
            deltas = moved(self.first, self.last)
            if deltas:
                self.texts = self._texts(session, list(deltas))
        except Exception as exc:
            self.flag = flag_for(self.dialect, one_line(exc), self.database)
            return
        if self.explain:
            by_id = {entry_id(k): e.total_ms for k, e in deltas.items()}
            candidates = [
                (text, by_id.get(key, 0.0))
                for key, text in self.texts.items()
                if not is_monitoring(text)
            ]
            try:
                self.plans, self.plan_failures = explain_all(session, self.dialect, candidates)
            except Exception as exc:
                self.plan_failures = [one_line(exc)]

    def _texts(self, session: Rows, keys: Sequence[Key]) -> dict[str, str]:
        sql = mysql_texts_sql(keys) if self.dialect is Dialect.MYSQL else pg_texts_sql(keys)
        return {str(k): str(t) for k, t in session.rows(sql) if k is not None and t is not None}

    def record(
        self, measured_start: float | None, clients: Sequence[ClientSide] = ()
    ) -> StatementsRecord | None:
        source = source_of(self.dialect)
        if self.flag is not None:
            return StatementsRecord(source=source, flag=self.flag)
        if self.first is None or self.last is None:
            return None

        def offset(at: float | None) -> float | None:
            if at is None or measured_start is None:
                return None
            return round(at - measured_start, 3)

        record = statements_record(
            source,
            self.first,
            self.last,
            self.texts,
            (offset(self.first_at), offset(self.last_at)),
            clients,
            {fp: (plan.json, plan.shape) for fp, plan in self.plans.items()},
        )
        if self.plan_failures:
            notes = [*record.notes, *(f"no plan for {f}" for f in self.plan_failures)]
            record = record.model_copy(update={"notes": notes})
        return record
