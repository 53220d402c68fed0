"""What the server's sessions are doing, sampled a few times a second: PostgreSQL's
`pg_stat_activity` (wait_event_type:wait_event of active backends, and how many sit idle waiting
for their client), MySQL/MariaDB's processlist states and InnoDB lock waits. Summed over the run
it is a histogram of backend-samples: where the server's sessions spent their time.

Only sessions of the benchmarked database count, never the observer's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbscale.modes import Dialect
from dbscale.observe.section import WaitsRecord

# An active PostgreSQL backend with no wait event is running on a CPU (or waiting for one).
CPU_EVENT = "CPU"
STARTING = "starting"

PG_WAITS_SQL = """\
SELECT coalesce(state, 'starting'),
       CASE WHEN state = 'active' THEN coalesce(wait_event_type || ':' || wait_event, 'CPU') END,
       count(*)
FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
  AND (datname = current_database() OR datname IS NULL)
GROUP BY 1, 2"""

MYSQL_WAITS_SQL = """\
SELECT CASE WHEN COMMAND = 'Sleep' THEN 'idle' WHEN COMMAND = 'Connect' THEN 'starting'
            ELSE 'active' END,
       CASE WHEN COMMAND NOT IN ('Sleep', 'Connect')
            THEN CONCAT('State:', COALESCE(NULLIF(STATE, ''), 'executing')) END,
       COUNT(*)
FROM information_schema.PROCESSLIST
WHERE ID <> CONNECTION_ID() AND (DB = DATABASE() OR DB IS NULL)
  AND USER NOT IN ('system user', 'event_scheduler') AND COMMAND NOT IN ('Daemon', 'Binlog Dump')
GROUP BY 1, 2
UNION ALL
SELECT 'lock', 'Lock:innodb row lock', COUNT(*) FROM information_schema.INNODB_TRX
WHERE trx_state = 'LOCK WAIT'"""

# Wait classes the verdict reasons with.
CLASSES = ("cpu", "lock", "lwlock", "io", "wal", "client", "other")
_WAL_EVENTS = ("IO:WALSync", "IO:WALWrite", "IO:WALInitSync", "LWLock:WALWrite", "IPC:SyncRep")
_MYSQL_LOCK_WORDS = ("lock", "Waiting for")
_MYSQL_IO_WORDS = ("handler commit", "flush", "Opening tables", "Creating sort index")
_MYSQL_CLIENT_WORDS = ("Sending to client", "Writing to net", "Reading from net")


def classify(event: str) -> str:
    """One of CLASSES for a `type:event` label (PostgreSQL) or `State:...` (MySQL)."""
    if event == CPU_EVENT:
        return "cpu"
    if event.startswith(_WAL_EVENTS):
        return "wal"
    kind, _, name = event.partition(":")
    if kind == "State":
        return _classify_mysql_state(name)
    return {
        "Lock": "lock",
        "BufferPin": "lock",
        "LWLock": "lwlock",
        "IO": "io",
        "Client": "client",
    }.get(kind, "other")


def _classify_mysql_state(state: str) -> str:
    if any(word in state for word in _MYSQL_CLIENT_WORDS):
        return "client"
    if any(word in state for word in _MYSQL_IO_WORDS):
        return "io"
    if any(word in state for word in _MYSQL_LOCK_WORDS):
        return "lock"
    return "cpu"  # executing, Sending data, updating, statistics, ...


@dataclass
class WaitHistogram:
    """Backend-samples by session state and, for active sessions, by wait event."""

    samples: int = 0
    states: Counter[str] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)

    def add(self, rows: Iterable[Sequence[Any]]) -> None:
        """One sample: rows of (state, event or null, count) from the dialect's query."""
        self.samples += 1
        events: Counter[str] = Counter()
        lock_waits = 0
        for state, event, count in rows:
            n = int(count or 0)
            if state == "lock":  # MySQL: InnoDB transactions waiting for a row lock
                lock_waits += n
                continue
            self.states[str(state)] += n
            if event is not None and state == "active":
                events[str(event)] += n
        if lock_waits:
            # MySQL shows a session waiting for a row lock under a busy-looking state
            # ("updating"); those samples move from their state to the lock wait.
            for event in [e for e, _ in events.most_common() if classify(e) == "cpu"]:
                moved = min(lock_waits, events[event])
                events[event] -= moved
                events["Lock:innodb row lock"] += moved
                lock_waits -= moved
        self.events.update(+events)

    def merge(self, other: WaitHistogram) -> None:
        self.samples += other.samples
        self.states.update(other.states)
        self.events.update(other.events)

    @property
    def active(self) -> int:
        return self.states.get("active", 0)

    @property
    def sessions(self) -> int:
        return sum(self.states.values())

    def class_shares(self) -> dict[str, float]:
        """Share of active backend-samples per wait class (0..1)."""
        active = sum(self.events.values())
        shares = dict.fromkeys(CLASSES, 0.0)
        if active == 0:
            return shares
        for event, n in self.events.items():
            shares[classify(event)] += n / active
        return shares

    def top_events(self, n: int = 3) -> list[tuple[str, float]]:
        active = sum(self.events.values())
        if active == 0:
            return []
        return [(e, c / active) for e, c in self.events.most_common(n)]

    def to_record(self, interval_ms: float) -> WaitsRecord:
        samples = max(self.samples, 1)
        return WaitsRecord(
            samples=self.samples,
            interval_ms=round(interval_ms, 1),
            sessions_mean=round(self.sessions / samples, 2),
            active_mean=round(self.active / samples, 2),
            states=dict(self.states.most_common()),
            events=dict(self.events.most_common()),
            classes={k: round(v, 4) for k, v in self.class_shares().items() if v > 0},
        )

    @classmethod
    def from_record(cls, data: WaitsRecord | Mapping[str, Any]) -> WaitHistogram:
        record = WaitsRecord.model_validate(data)
        return cls(
            samples=record.samples,
            states=Counter(record.states),
            events=Counter({name: int(n) for name, n in record.events.items()}),
        )


def waits_sql(dialect: Dialect) -> str:
    return MYSQL_WAITS_SQL if dialect is Dialect.MYSQL else PG_WAITS_SQL
