"""`dbscale sysbench TEST [options] prepare|run|cleanup`: sysbench's own command line (1.0.20),
read as sysbench reads it (`--name=value` or `--name value`, bare `--flag` for on, the test by
name or as its .lua path, the command last), and turned into dbscale's prepare, run (recorded,
printed in sysbench's shape) or cleanup. sysbench's run options map to dbscale's flags, its
connection options to a target URL, and every other `--key=value` is the test's own parameter
(`--set key=value`, checked by the workload). An option with no dbscale equivalent is refused,
naming it. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from urllib.parse import quote

from dbscale.errors import ConfigError

COMMANDS = ("prepare", "run", "cleanup")
UNSUPPORTED: dict[str, str] = {
    "percentile": "a reported percentile other than the 95th (all of p50-p99.9 are recorded)",
    "histogram": "sysbench's text histogram (the report draws every run's)",
    "forced-shutdown": "a forced shutdown (dbscale ends runs at their time)",
    "thread-stack-size": "a thread stack size", "thread-init-timeout": "a thread init timeout",
    "report-checkpoints": "cumulative reports at checkpoints (dbscale keeps every second)",
    "debug": "sysbench's debug output", "validate": "sysbench's result validation",
    "config-file": "a file of options (give them on the command line)",
    "luajit-cmd": "LuaJIT commands", "db-debug": "database debug output",
    "mysql-ignore-errors": "errors to ignore (deadlocks and lock waits restart the event, as "
                           "sysbench's default does)",
    "mysql-dry-run": "a dry run of the driver", "mysql-compression": "protocol compression",
    "pgsql-variant": "another PostgreSQL-compatible variant",
    "rand-spec-iter": "a special distribution's tuning", "rand-spec-pct": "a special "
    "distribution's tuning", "rand-spec-res": "a special distribution's tuning",
    "rand-pareto-h": "a pareto distribution's h", "rand-zipfian-exp": "a zipfian exponent",
    "tx-rate": "the deprecated --tx-rate (use --rate)", "max-requests": "the deprecated "
    "--max-requests (use --events)", "max-time": "the deprecated --max-time (use --time)",
    "num-threads": "the deprecated --num-threads (use --threads)",
}  # fmt: skip
DEFAULTS = {"mysql": ("localhost", "3306"), "pgsql": ("localhost", "5432")}


@dataclass(frozen=True)
class SysbenchCall:
    """What a sysbench command line asks for."""

    command: str  # prepare | run | cleanup
    workload: str  # sysbench:oltp_read_write
    url: str
    params: tuple[str, ...] = ()  # key=value, the test's own
    clients: int = 1
    duration_s: int | None = 10
    transactions: int | None = None  # per client (--events / --threads)
    rate: float | None = None
    interval_s: int | None = None
    warmup_s: int | None = None
    seed: int | None = None
    protocol: str = "prepared"
    tls: str | None = None
    out: str | None = None  # dbscale's own --out: the results directory

    def given(self, name: str) -> str | None:
        """The test's parameter `name` as the command line gave it last, or None."""
        found = [p.partition("=")[2] for p in self.params if p.partition("=")[0] == name]
        return found[-1] if found else None

    def param(self, name: str, default: int) -> int:
        """A whole-number parameter of the test (sysbench's default when not given)."""
        value = self.given(name)
        return int(value) if value is not None and value.isdigit() else default

    def flag(self, name: str, default: bool) -> bool:
        """An on/off parameter of the test (sysbench's default when not given)."""
        value = self.given(name)
        return default if value is None else value.lower() in ("on", "true", "1", "yes")


def _options(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """`--name=value`, `--name value` and bare `--name` (on) by name; the other words."""
    options: dict[str, str] = {}
    words: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            name = name.replace("_", "-")  # sysbench takes either spelling
            if not eq:
                following = argv[i + 1] if i + 1 < len(argv) else None
                if (
                    following is not None
                    and not following.startswith("--")
                    and (following not in COMMANDS or i + 2 < len(argv))
                ):
                    value, i = following, i + 1
                else:
                    value = "on"
            options[name] = value
        else:
            words.append(word)
        i += 1
    return options, words


def _number(options: dict[str, str], name: str, *, positive: bool = False) -> int | None:
    text = options.pop(name, None)
    if text is None:
        return None
    if not text.isdigit() or (positive and int(text) < 1):
        raise ConfigError(f"--{name}={text}: not a whole number" + (" above 0" if positive else ""),
                          f"give --{name}=N")  # fmt: skip
    return int(text)


def parse_sysbench(argv: Sequence[str], env: Mapping[str, str]) -> SysbenchCall:
    """sysbench's command line as a `SysbenchCall`; `ConfigError` naming what cannot be done
    as sysbench would."""
    options, words = _options(argv)
    for name in options:
        if name in UNSUPPORTED and not (name == "percentile" and options[name] == "95"):
            raise ConfigError(
                f"dbscale sysbench does not take --{name}: {UNSUPPORTED[name]}",
                "leave it out; `dbscale run --help` lists what dbscale can do",
            )
    options.pop("percentile", None)
    if len(words) != 2 or words[1] not in COMMANDS:
        raise ConfigError("dbscale sysbench takes a test and a command: TEST [options] "
                          "prepare|run|cleanup", "e.g. dbscale sysbench oltp_read_write "
                          "--tables=4 --table-size=100000 prepare")  # fmt: skip
    test = PurePath(words[0]).name.removesuffix(".lua")
    driver = options.pop("db-driver", "mysql")
    if driver not in DEFAULTS:
        raise ConfigError(f"--db-driver={driver}: dbscale speaks mysql and pgsql",
                          "--db-driver=mysql or --db-driver=pgsql")  # fmt: skip
    url, tls = _url(driver, options, env)
    threads = _number(options, "threads", positive=True) or 1
    time_s = _number(options, "time")
    events = _number(options, "events")
    duration: int | None = 10 if time_s is None else time_s or None
    transactions = None
    if events:
        if events % threads:
            raise ConfigError(f"--events={events} over --threads={threads}: dbscale counts "
                              "transactions per client, and these do not divide evenly",
                              f"give --events a multiple of {threads}")  # fmt: skip
        transactions = events // threads
        duration = time_s or None
    ps_mode = options.pop("db-ps-mode", "auto")
    if ps_mode not in ("auto", "disable"):
        raise ConfigError(f"--db-ps-mode={ps_mode}: auto or disable", "--db-ps-mode=disable")
    rate = options.pop("rate", None)
    seed = _number(options, "rand-seed")
    out = options.pop("out", None)
    params = [f"{key.replace('-', '_')}={value}" for key, value in options.items()
              if key not in ("report-interval", "warmup-time")]  # fmt: skip
    return SysbenchCall(
        command=words[1], workload=f"sysbench:{test}", url=url, params=tuple(params),
        clients=threads, duration_s=duration, transactions=transactions,
        rate=float(rate) if rate and float(rate) > 0 else None,
        interval_s=_number(options, "report-interval") or None,
        warmup_s=_number(options, "warmup-time") or None, seed=seed or None,
        protocol="simple" if ps_mode == "disable" else "prepared", tls=tls, out=out,
    )  # fmt: skip


def _url(driver: str, options: dict[str, str], env: Mapping[str, str]) -> tuple[str, str | None]:
    """The target URL from `--mysql-*` or `--pgsql-*` (sysbench's defaults where not given;
    a password goes into the URL, which dbscale never writes out unredacted)."""
    prefix = f"{driver}-"
    mine = {k[len(prefix) :]: options.pop(k) for k in list(options) if k.startswith(prefix)}
    other = "pgsql-" if driver == "mysql" else "mysql-"
    for key in [k for k in options if k.startswith(other)]:
        options.pop(key)  # sysbench ignores the other driver's options too
    host, port = DEFAULTS[driver]
    host, port = mine.pop("host", host), mine.pop("port", port)
    user, password = mine.pop("user", "sbtest"), mine.pop("password", "")
    db = mine.pop("db", "sbtest")
    tls = None
    query = ""
    if driver == "mysql":
        socket = mine.pop("socket", None)
        if socket:
            query = f"?socket={quote(socket, safe='/')}"
        if mine.pop("ssl", "off") in ("on", "required", "REQUIRED"):
            tls = "require"
    else:
        tls = env.get("PGSSLMODE") or None
    if mine:
        key = next(iter(mine))
        extra = ", socket, ssl" if driver == "mysql" else ""
        raise ConfigError(
            f"dbscale sysbench does not take --{prefix}{key}",
            f"the connection options it takes: --{prefix}host, port, user, password, db{extra}",
        )
    scheme = "mysql" if driver == "mysql" else "postgresql"
    auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")
    return f"{scheme}://{auth}@{host}:{port}/{quote(db, safe='')}{query}", tls
