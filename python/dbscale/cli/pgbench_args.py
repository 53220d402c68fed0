"""`dbscale pgbench ...`: pgbench's own command line, read as pgbench reads it (short and long
options, `-c10` and `--client=10`, flags grouped as `-nS`, the database name last, `PG*`
variables), and turned into what dbscale does with it: `-i` loads TPC-B (`dbscale prepare tpcb`),
anything else is a recorded run (`dbscale run`, printed in pgbench's shape; `--out DIR`, dbscale's
own, names its results directory). An option with no dbscale equivalent is refused, naming it.
Pure: no I/O, so it is tested on argument lists."""

from __future__ import annotations

import argparse
import getpass
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dbscale.errors import ConfigError

# pgbench's options that dbscale has no equivalent for, and why (refused, naming them).
UNSUPPORTED: dict[str, str] = {
    "-d": "libpq's debug output", "--debug": "libpq's debug output",
    "-v": "a vacuum of every table before the run (run VACUUM yourself first)",
    "--vacuum-all": "a vacuum of every table before the run (run VACUUM yourself first)",
    "-F": "a fill factor other than the default", "--fillfactor": "a fill factor",
    "-I": "chosen init steps (dbscale's load does them all)",
    "--init-steps": "chosen init steps (dbscale's load does them all)",
    "--foreign-keys": "foreign keys between the tables",
    "--partitions": "a partitioned pgbench_accounts",
    "--partition-method": "a partitioned pgbench_accounts",
    "--tablespace": "tablespaces", "--index-tablespace": "tablespaces",
    "--unlogged-tables": "unlogged tables",
    "--aggregate-interval": "an aggregated log (dbscale keeps per-second intervals)",
    "--log-prefix": "a log file name prefix (the log is in the results directory)",
    "--progress-timestamp": "progress lines with Unix timestamps",
    "--failures-detailed": "failures by kind in the log",
    "--verbose-errors": "every failed try's message (the results keep each error class's first)",
    "--exit-on-abort": "ending the run at a client's first abort",
    "--continue-on-error": "going on after an error",
    "--show-script": "printing a built-in script",
}  # fmt: skip
BUILTINS = ("tpcb-like", "simple-update", "select-only")
FLAG_LETTERS = frozenset("iqnClSNr")  # pgbench's short options that take no value
DEFAULT_SOCKET_DIR = "/var/run/postgresql"  # libpq's on Debian


@dataclass(frozen=True)
class PgbenchCall:
    """What a pgbench command line asks for. `init`: load (`-i`), else run."""

    init: bool
    conninfo: str
    scale: int | None = None
    tls: str | None = None  # PGSSLMODE
    scripts: tuple[str, ...] = ()  # dbscale's workload words (`tpcb-select-only`, `script:F@W`)
    clients: int = 1
    threads: int = 1
    duration_s: int | None = None
    transactions: int | None = None
    protocol: str = "simple"
    per_transaction_connect: bool = False
    progress_s: float | None = None
    rate: float | None = None
    latency_limit_ms: float | None = None
    log: bool = False
    sampling_rate: float | None = None
    defines: tuple[str, ...] = ()
    seed: int | None = None
    max_tries: int | None = None
    out: str | None = None
    notes: tuple[str, ...] = field(default=())


class _RefusedError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _RefusedError(message)


def _parser() -> _Parser:
    p = _Parser(prog="dbscale pgbench", add_help=False, allow_abbrev=False)
    add = p.add_argument
    add("-i", "--initialize", action="store_true")
    add("-s", "--scale", type=int)
    add("-q", "--quiet", action="store_true")
    add("-n", "--no-vacuum", action="store_true")
    add("-c", "--client", type=int, default=1)
    add("-j", "--jobs", type=int, default=1)
    add("-T", "--time", type=int)
    add("-t", "--transactions", type=int)
    add("-M", "--protocol", choices=("simple", "extended", "prepared"), default="simple")
    add("-C", "--connect", action="store_true")
    add("-P", "--progress", type=float)
    add("-R", "--rate", type=float)
    add("-L", "--latency-limit", type=float)
    add("-l", "--log", action="store_true")
    add("-r", "--report-per-command", action="store_true")
    add("--sampling-rate", type=float)
    add("-S", "--select-only", action="store_true")
    add("-N", "--skip-some-updates", action="store_true")
    add("-b", "--builtin", action="append", default=[])
    add("-f", "--file", action="append", default=[])
    add("-D", "--define", action="append", default=[])
    add("--random-seed")
    add("--max-tries", type=int)
    add("-h", "--host")
    add("-p", "--port")
    add("-U", "--username")
    add("--out")  # dbscale's own: the results directory (pgbench has no such option)
    add("dbname", nargs="?")
    return p


def _refused_option(argv: Sequence[str]) -> str | None:
    """The first option of `argv` dbscale does not take (as typed)."""
    for word in argv:
        if word == "--":
            return None
        name = word.split("=", 1)[0]
        if name in UNSUPPORTED:
            return name
        if word.startswith("-") and not word.startswith("--") and len(word) > 2:
            # grouped flags (-nS, -nr) up to the first that takes a value (-c10: "10" is it)
            for letter in word[1:]:
                if f"-{letter}" in UNSUPPORTED:
                    return f"-{letter}"
                if letter not in FLAG_LETTERS:
                    break
    return None


def parse_pgbench(argv: Sequence[str], env: Mapping[str, str]) -> PgbenchCall:
    """pgbench's command line (and its `PG*` variables) as a `PgbenchCall`; `ConfigError`
    naming the option dbscale cannot do as pgbench would."""
    refused = _refused_option(argv)
    if refused is not None:
        raise ConfigError(
            f"dbscale pgbench does not take {refused}: {UNSUPPORTED[refused]}",
            "leave it out; `dbscale run --help` lists what dbscale can do",
        )
    try:
        a = _parser().parse_args(list(argv))
    except _RefusedError as exc:
        raise ConfigError(
            f"dbscale pgbench: {exc}", "see pgbench's manual for the option"
        ) from None
    for name, value in (("-c", a.client), ("-j", a.jobs)):
        if value < 1:
            raise ConfigError(f"{name} {value}: must be at least 1", f"give {name} 1 or more")
    conninfo = _conninfo(a, env)
    tls = env.get("PGSSLMODE") or None
    if a.initialize:
        return PgbenchCall(init=True, conninfo=conninfo, scale=a.scale or 1, tls=tls)
    if a.time is not None and a.transactions is not None:
        raise ConfigError("specify either a number of transactions (-t) or a duration (-T), "
                          "not both", "give -t or -T")  # fmt: skip
    return PgbenchCall(
        init=False, conninfo=conninfo, tls=tls, scripts=_scripts(a), clients=a.client,
        threads=min(a.jobs, a.client), duration_s=a.time,
        transactions=a.transactions if a.time is not None or a.transactions is not None else 10,
        protocol=a.protocol, per_transaction_connect=a.connect, progress_s=a.progress,
        rate=a.rate, latency_limit_ms=a.latency_limit, log=a.log, sampling_rate=a.sampling_rate,
        defines=tuple(a.define) + ((f"scale={a.scale}",) if a.scale and a.file else ()),
        seed=_seed(a.random_seed), max_tries=a.max_tries, out=a.out,
        notes=(("scale option ignored, using count from pgbench_branches table",)
               if a.scale and not a.file else ()),
    )  # fmt: skip


def _scripts(a: argparse.Namespace) -> tuple[str, ...]:
    """The workload words: one built-in alone is that workload; several scripts, a file or a
    weight make a mix."""
    builtins = [("select-only", "1")] if a.select_only else []
    builtins += [("simple-update", "1")] if a.skip_some_updates else []
    for spec in a.builtin:
        name, _, weight = spec.partition("@")
        found = [b for b in BUILTINS if b.startswith(name)] if name else []
        if len(found) != 1:
            raise ConfigError(
                f"-b {spec}: " + ("ambiguous" if found else "no such built-in script"),
                f"built-in scripts: {', '.join(BUILTINS)} (a unique prefix is enough)",
            )
        builtins.append((found[0], weight or "1"))
    files = [spec.rpartition("@") if "@" in spec else (spec, "", "1") for spec in a.file]
    if not builtins and not files:
        builtins = [("tpcb-like", "1")]
    words = [f"{name}@{weight}" for name, weight in builtins]
    words += [f"script:{path}@{weight}" for path, _, weight in files]
    if len(words) == 1 and not files and not a.report_per_command:
        # one built-in alone is dbscale's native workload; under -r it runs as a script, whose
        # commands are timed one by one as pgbench's are
        name = builtins[0][0]
        return ("tpcb" if name == "tpcb-like" else f"tpcb-{name}",)
    return tuple(words)


def _seed(text: str | None) -> int | None:
    if text in (None, "time", "rand"):
        return None  # a seed from the clock or chance: dbscale draws one likewise
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"--random-seed {text}: not a number, time or rand",
                          "give --random-seed N") from None  # fmt: skip


def _conninfo(a: argparse.Namespace, env: Mapping[str, str]) -> str:
    """libpq's key=value string from the flags, then PG* variables, then libpq's defaults (the
    password is left to PGPASSWORD or ~/.pgpass, never written into the string)."""
    user = a.username or env.get("PGUSER") or getpass.getuser()
    parts = {
        "host": a.host or env.get("PGHOST") or DEFAULT_SOCKET_DIR,
        "port": a.port or env.get("PGPORT") or "5432",
        "user": user,
        "dbname": a.dbname or env.get("PGDATABASE") or user,
    }
    for key, value in parts.items():
        if any(c.isspace() or c in "'\\" for c in value):
            raise ConfigError(f"{key} {value!r}: spaces and quotes are not taken here",
                              "give it without them")  # fmt: skip
    return " ".join(f"{k}={v}" for k, v in parts.items())
