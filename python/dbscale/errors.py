"""dbscale's one exception tree. Every error a user can meet is a `DbscaleError`: one line saying
what is wrong, a `hint:` line saying what to do, and an exit code from the constants below. The
CLI prints them without a traceback; native errors are mapped here by their stable `kind`.
"""

from __future__ import annotations

from typing import ClassVar

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_TARGET = 3
EXIT_NOT_PREPARED = 4
EXIT_SQL = 5
EXIT_RUN = 6
EXIT_INCONSISTENT = 7
EXIT_UNCHECKED = 8
EXIT_REGRESSION = 9
EXIT_NO_CAPACITY = 10
EXIT_THRESHOLD = 11
EXIT_INTERNAL = 70
EXIT_CANCELLED = 130


class DbscaleError(Exception):
    """Base of every user-facing error."""

    exit_code: ClassVar[int] = EXIT_FAILURE
    default_hint: ClassVar[str] = "run the command with --help to see its options"
    label: ClassVar[str] = "error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint or self.default_hint

    def render(self) -> str:
        """The two lines the user sees: `error: ...` and `hint: ...`."""
        first_line = " ".join(self.message.split())
        return f"{self.label}: {first_line}\nhint: {self.hint}"


class HintedValueError(ValueError):
    """A model validator's refusal that keeps its hint: pydantic passes the exception on, and
    the plan's validation (plan/build.py) makes it the error's `hint:`."""

    def __init__(self, message: str, hint: str | None) -> None:
        super().__init__(message)
        self.hint = hint


class ConfigError(DbscaleError):
    """Bad options, values, workload names or parameters."""

    exit_code = EXIT_USAGE
    default_hint = (
        "check the option's spelling and value; `dbscale workloads` lists workloads and their "
        "parameters"
    )


class ScriptError(ConfigError):
    """A pgbench-style script that does not parse; the message names file, line and column."""

    default_hint = (
        "fix the script at the line and column shown; docs/scripts.md describes the language"
    )


class TargetError(DbscaleError):
    """The target could not be reached, started or used."""

    exit_code = EXIT_TARGET
    default_hint = "check the --target URL and that the server is running"


class TargetUnreachableError(TargetError):
    default_hint = "is the server running and listening there? check host, port or socket directory"


class AuthenticationError(TargetError):
    default_hint = (
        "check the user and password in the URL (or PGPASSWORD) and the server's pg_hba.conf"
    )


class DatabaseMissingError(TargetError):
    default_hint = (
        "create the database first (e.g. `createdb NAME`) or name an existing one in the URL"
    )


class TlsError(TargetError):
    default_hint = (
        "check --tls (disable/prefer/require/verify-ca/verify-full) and sslrootcert against what "
        "the server offers"
    )


class TargetUnavailableError(TargetError):
    default_hint = (
        "the server is starting, stopping or recovering, or is not the node the routing wants (a "
        "standby, not the primary): wait, or check which node is the primary"
    )


class TooManyConnectionsError(TargetUnavailableError):
    default_hint = (
        "the server has no connection slot left (max_connections): run fewer clients, or raise "
        "max_connections"
    )


class InvalidTargetError(TargetError):
    """A malformed URL: the user's input, so it exits like a usage error."""

    exit_code = EXIT_USAGE
    default_hint = "use postgresql://user[:password]@host[:port]/dbname or libpq key=value form"


class LocalServerError(TargetError):
    """A private PostgreSQL server (embedded or test) could not be set up, started or stopped."""

    default_hint = (
        "see the server log named above; `make system-deps` installs the servers' programs"
    )


class NotPreparedError(DbscaleError):
    """The workload's tables are missing or hold other parameters."""

    exit_code = EXIT_NOT_PREPARED
    default_hint = (
        "run `dbscale prepare WORKLOAD --target URL` first (with the same --set parameters)"
    )


class SqlError(DbscaleError):
    """A statement failed outside the measured loop (prepare, cleanup, checks)."""

    exit_code = EXIT_SQL
    default_hint = "the server refused a statement; its message above says why"


class RunError(DbscaleError):
    """A run could not go on (its verdict is `failed`); what it measured is still recorded."""

    exit_code = EXIT_RUN
    default_hint = "see runs.jsonl in the results directory for what was measured before it stopped"


class InconsistentDataError(DbscaleError):
    """`dbscale check` found the data breaking a consistency condition."""

    exit_code = EXIT_INCONSISTENT


class UncheckedError(DbscaleError):
    """The consistency check after a run could not finish (the server gone, say): the data is
    neither known good nor known bad, and the run keeps its own verdict."""

    exit_code = EXIT_UNCHECKED
    default_hint = (
        "check the data when the server answers again: dbscale check WORKLOAD --target URL"
    )


class ThresholdFailedError(DbscaleError):
    """A threshold (plan `thresholds`, `--threshold`) failed at a point, or the study was stopped
    by `--abort-on-fail`; the runs are kept and the report is written."""

    exit_code = EXIT_THRESHOLD
    default_hint = (
        "see the verdicts above (thresholds.json); an inconclusive one needs more runs "
        "(--repeat) to decide"
    )


class RegressionFoundError(DbscaleError):
    """`dbscale history detect --fail-on regression` found a regression in the newest ingest."""

    exit_code = EXIT_REGRESSION
    default_hint = (
        "see the changes above; if the runs were bad rather than the change, "
        "`dbscale history exclude RUN_ID --reason ...` takes them out"
    )


class NoCapacityError(DbscaleError):
    """A capacity search ended without an answer it can stand by: no level passed, a level was
    too short to decide, or the host was busy where the answer would have been."""

    exit_code = EXIT_NO_CAPACITY
    default_hint = "see the levels above and docs/capacity.md"


class ResultsError(DbscaleError):
    """The results directory could not be written."""

    exit_code = EXIT_FAILURE
    default_hint = "choose a writable directory with --out"


class HistogramError(ResultsError):
    """A stored latency histogram the core cannot read back or merge."""

    default_hint = (
        "the results hold a histogram dbscale did not write (edited, truncated, or recorded "
        "with other settings); re-run that point"
    )


class InternalError(DbscaleError):
    """A dbscale bug or a broken installation."""

    exit_code = EXIT_INTERNAL
    default_hint = "this is a dbscale bug; please report it with the command line"


class NativeModuleMissingError(InternalError):
    default_hint = "build it with `make build` (maturin develop) or install a dbscale wheel"


class Cancelled(DbscaleError):  # noqa: N818 - a user's decision, not a failure
    """Ctrl-C, SIGTERM or SIGHUP stopped it (interrupts.py); what ran is recorded."""

    exit_code = EXIT_CANCELLED
    label = "cancelled"
    default_hint = "what ran, the interrupted run included, is in the results directory above"


_KINDS: dict[str, type[DbscaleError]] = {
    "config": ConfigError,
    "script": ScriptError,
    "connect_unreachable": TargetUnreachableError,
    "connect_auth": AuthenticationError,
    "connect_database": DatabaseMissingError,
    "connect_tls": TlsError,
    "connect_unavailable": TargetUnavailableError,
    "connect_limit": TooManyConnectionsError,
    "connect_invalid": InvalidTargetError,
    "not_prepared": NotPreparedError,
    "sql": SqlError,
    "histogram": HistogramError,
    "internal": InternalError,
}


def error_class_for_kind(kind: str) -> type[DbscaleError]:
    """The exception class for a native error kind; unknown kinds are internal errors."""
    return _KINDS.get(kind, InternalError)


def from_core(error: Exception) -> DbscaleError:
    """Maps a native `CoreError` (args `(kind, message, hint)`) into the tree, keeping its hint."""
    kind = getattr(error, "kind", None)
    message = getattr(error, "message", None)
    hint = getattr(error, "hint", None)
    if kind is None and len(error.args) == 3:
        kind, message, hint = (str(a) for a in error.args)
    cls = error_class_for_kind(str(kind))
    text = str(message) if message else str(error)
    if cls is InternalError and kind not in _KINDS:
        text = f"{text} (native error kind {kind!r})"
    return cls(text, str(hint) if hint else None)


class PlanError(ConfigError):
    """A plan (file, recipe or command line) that cannot run; the message names file and line."""

    default_hint = "see docs/plans.md for the plan format; `dbscale run PLAN --dry-run` checks it"
