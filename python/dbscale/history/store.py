"""The history store: a directory of immutable Parquet files, written and read with DuckDB.

    STORE/ingests/<time>-<id>.parquet     one per `history add`, HistoryRow columns
    STORE/exclusions/<time>-<id>.parquet  one per `history exclude`: run_id, reason, excluded_at

A file is written under a temporary name and renamed into place, so a reader sees it whole or
not at all; nothing is ever rewritten. The studies' runs.jsonl stay the source of truth. DuckDB
is an optional dependency (`pip install 'dbscale[history]'`), imported only here and only when
the store is used.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbscale.errors import DbscaleError, ResultsError
from dbscale.history.rows import COLUMNS, RUN, SQL_TYPES, HistoryRow

if TYPE_CHECKING:
    import pandas as pd

INGESTS, EXCLUSIONS = "ingests", "exclusions"
LOCK_FILE = ".lock"  # held while an ingest or an exclusion is written (two adds never interleave)
EXCLUSION_COLUMNS = ("run_id", "reason", "excluded_at")
# What each folder's files must hold: their columns and the types DuckDB reads them as.
EXPECTED = {
    INGESTS: {c: SQL_TYPES.get(c, "VARCHAR") for c in COLUMNS},
    EXCLUSIONS: dict.fromkeys(EXCLUSION_COLUMNS, "VARCHAR"),
}
DEFAULT_STORE = "dbscale-history"
STORE_ENV = "DBSCALE_HISTORY"


class HistoryDependencyError(DbscaleError):
    default_hint = "install the history extra: pip install 'dbscale[history]' (DuckDB)"


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:
        raise HistoryDependencyError(
            "dbscale history needs DuckDB, which is not installed"
        ) from None
    return duckdb


@dataclass(frozen=True)
class Exclusion:
    run_id: str
    reason: str
    excluded_at: str


def _sql_type(column: str) -> str:
    return SQL_TYPES.get(column, "VARCHAR")


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class HistoryStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def at(cls, path: Path | None, env: Mapping[str, str]) -> HistoryStore:
        """--store, else $DBSCALE_HISTORY, else ./dbscale-history."""
        return cls(path or Path(env.get(STORE_ENV) or DEFAULT_STORE))

    def _files(self, folder: str) -> list[Path]:
        return sorted((self.path / folder).glob("*.parquet"))

    @property
    def has_ingests(self) -> bool:
        return bool(self._files(INGESTS))

    def _write(
        self, folder: str, stamp: str, columns: Sequence[str], rows: Sequence[Sequence[object]]
    ) -> Path:
        duckdb = _duckdb()
        target_dir = self.path / folder
        try:
            target_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"cannot create the history store {self.path}: {exc.strerror}",
                               "choose a writable --store") from None  # fmt: skip
        name = f"{stamp.replace(':', '').replace('-', '')}-{uuid.uuid4().hex[:8]}.parquet"
        final, partial = target_dir / name, target_dir / f".{name}.partial"
        con = duckdb.connect()
        try:
            typed = ", ".join(f"{c} {_sql_type(c)}" for c in columns)
            con.execute(f"CREATE TABLE rows ({typed})")
            marks = ", ".join("?" for _ in columns)
            con.executemany(f"INSERT INTO rows VALUES ({marks})", [list(r) for r in rows])
            con.execute(f"COPY rows TO {_quote(partial)} (FORMAT parquet)")
            with partial.open("rb") as written:
                os.fsync(written.fileno())
            partial.rename(final)
        except (OSError, duckdb.Error) as exc:
            raise ResultsError(f"cannot write {final}: {exc}", "check the disk and the store's "
                               "permissions; nothing was added") from None  # fmt: skip
        finally:  # an error or an interrupt leaves no partial file behind
            partial.unlink(missing_ok=True)
            con.close()
        return final

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Holds the store's lock (other dbscale processes adding to it wait), so what is read
        in the block (the runs already stored) still holds when the block writes."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            handle = (self.path / LOCK_FILE).open("a")
        except OSError as exc:
            raise ResultsError(
                f"cannot write to the history store {self.path}: {exc.strerror or exc}",
                "choose a writable --store",
            ) from None
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def add(self, rows: Sequence[HistoryRow]) -> Path:
        """One ingest's rows as a new file (under the lock: see `locked`)."""
        return self._write(INGESTS, rows[0].ingested_at, COLUMNS,
                           [[getattr(r, c) for c in COLUMNS] for r in rows])  # fmt: skip

    def exclude(self, exclusions: Sequence[Exclusion]) -> Path:
        with self.locked():
            rows = [[e.run_id, e.reason, e.excluded_at] for e in exclusions]
            return self._write(EXCLUSIONS, exclusions[0].excluded_at, EXCLUSION_COLUMNS, rows)

    def check(self) -> None:
        """Every file of the store is one dbscale wrote: its columns and their types; a
        foreign or damaged file is named, and nothing is read or added beside it."""
        duckdb = _duckdb()
        for folder, expected in EXPECTED.items():
            for path in self._files(folder):
                con = duckdb.connect()
                try:
                    found = {name.lower(): kind.upper() for name, kind, *_ in
                             con.execute(f"DESCRIBE SELECT * FROM read_parquet({_quote(path)})")
                             .fetchall()}  # fmt: skip
                except duckdb.Error as exc:
                    raise _foreign(path, f"it cannot be read: {str(exc).splitlines()[0]}") from None
                finally:
                    con.close()
                wrong = [f"{c} ({found.get(c, 'missing')}, not {t})"
                         for c, t in expected.items() if found.get(c) != t]  # fmt: skip
                if wrong:
                    raise _foreign(
                        path,
                        "its columns are not a history store's: "
                        + ", ".join(wrong[:4])
                        + (" ..." if len(wrong) > 4 else ""),
                    )

    def _query(self, folder: str, select: str, where: str = "") -> list[tuple[Any, ...]]:
        """`SELECT select FROM` every file of `folder` [`WHERE where`]."""
        files = self._files(folder)
        if not files:
            return []
        self.check()
        duckdb = _duckdb()
        listed = ", ".join(_quote(f) for f in files)
        con = duckdb.connect()
        try:
            found: list[tuple[Any, ...]] = con.execute(
                f"SELECT {select} FROM read_parquet([{listed}], union_by_name = true) {where}"
            ).fetchall()
        except duckdb.Error as exc:
            raise ResultsError(f"cannot read the history store {self.path}: {exc}",
                               "a file in it is damaged; move it aside") from None  # fmt: skip
        finally:
            con.close()
        return found

    def rows(self) -> list[HistoryRow]:
        """Every ingest's rows, in the order they were added."""
        return [HistoryRow(*values) for values in self._query(INGESTS, ", ".join(COLUMNS))]

    def run_ids(self) -> set[str]:
        """Every run in the store (DuckDB reads only that column)."""
        found = self._query(INGESTS, "DISTINCT run_id", f"WHERE kind = '{RUN}'")
        return {run_id for (run_id,) in found}

    def exclusions(self) -> list[Exclusion]:
        return [Exclusion(*v) for v in self._query(EXCLUSIONS, "run_id, reason, excluded_at")]

    def frame(self) -> pd.DataFrame:
        """Every row as a pandas DataFrame (the columns of `load_results(dir).metrics`, and the
        store's own), with `excluded` and `exclude_reason` from the exclusions."""
        from dbscale.results.analysis import frame_of

        reasons = {e.run_id: e.reason for e in self.exclusions()}
        rows: list[dict[str, Any]] = [{**r.to_json(), "excluded": r.run_id in reasons,
                 "exclude_reason": reasons.get(r.run_id)} for r in self.rows()]  # fmt: skip
        return frame_of(rows, times=("time", "ingested_at"))


def _foreign(path: Path, why: str) -> ResultsError:
    return ResultsError(
        f"{path} is not a file of a dbscale history store: {why}",
        f"move it out of {path.parent} (the store keeps only what `dbscale history add` and "
        "`exclude` write); nothing was read or added",
    )
