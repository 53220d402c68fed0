"""pgbench's and sysbench's options that `dbscale run` does not take under the same name, and
what does their job here, so a habit typed out of the peers' manuals is answered with the
equivalent rather than click's "No such option" (or a look-alike it guesses)."""

from __future__ import annotations

# Each flag as the peer spells it -> (what it is there, what to type here).
PEER_FLAGS: dict[str, tuple[str, str]] = {
    "-S": (
        "pgbench's built-in select-only script",
        "name the workload: dbscale run tpcb-select-only --target ...",
    ),
    "-N": (
        "pgbench's built-in simple-update script",
        "name the workload: dbscale run tpcb-simple-update --target ...",
    ),
    "-b": (
        "pgbench's built-in script choice",
        "name the workload: tpcb, tpcb-select-only or tpcb-simple-update (`dbscale workloads`)",
    ),
    "--builtin": (
        "pgbench's built-in script choice",
        "name the workload: tpcb, tpcb-select-only or tpcb-simple-update",
    ),
    "-f": (
        "pgbench's custom script file",
        "name it as the workload: dbscale run script:FILE[@WEIGHT][,FILE2@W2] --target ...",
    ),
    "--file": ("pgbench's custom script file", "name it as the workload: dbscale run script:FILE"),
    "-s": (
        "pgbench's scale factor",
        "--set scale=N (and dbscale prepare tpcb --set scale=N loads it, as pgbench -i -s N)",
    ),
    "--scale": ("pgbench's scale factor", "--set scale=N"),
    "-i": ("pgbench's initialization", "dbscale prepare tpcb --target ... --set scale=N"),
    "--initialize": ("pgbench's initialization", "dbscale prepare tpcb --set scale=N"),
    "-C": ("pgbench's connection per transaction", "--connect per-transaction"),
    "-r": (
        "pgbench's per-statement latencies",
        "run the workload as a script (script:FILE, or a built-in as tpcb-like@1): each of its "
        "commands is timed and printed as -r prints them",
    ),
    "--report-per-command": (
        "pgbench's per-statement latencies",
        "run the workload as a script (script:FILE, or a built-in as tpcb-like@1)",
    ),
    "-n": (
        "pgbench's no-vacuum",
        "nothing to add: dbscale run never vacuums (dbscale prepare does, once, as pgbench -i)",
    ),
    "--no-vacuum": ("pgbench's no-vacuum", "nothing to add: dbscale run never vacuums"),
    "-v": ("pgbench's vacuum of all tables", "run VACUUM yourself before the run"),
    "--time": ("sysbench's run time", "-T/--duration (e.g. -T 30s)"),
    "--events": (
        "sysbench's event count",
        "-t/--transactions N (per client), or -T/--duration for a time",
    ),
    "--tables": ("sysbench's table count", "--set tables=N"),
    "--table-size": ("sysbench's rows per table", "--set table_size=N"),
    "--table_size": ("sysbench's rows per table", "--set table_size=N"),
    "--db-driver": ("sysbench's database driver", "--target mysql://... or postgresql://..."),
    "--db-ps-mode": (
        "sysbench's prepared-statement mode",
        "-M/--protocol (prepared, or simple for disable)",
    ),
    "--rand-type": ("sysbench's random distribution", "--set rand_type=uniform|gaussian|..."),
    "--histogram": (
        "sysbench's latency histogram",
        "nothing to add: every run keeps its histogram (dbscale report draws it)",
    ),
    "--percentile": (
        "sysbench's reported percentile",
        "nothing to add: p50/p95/p99/p99.9 are all recorded",
    ),
    "--warmup-time": ("sysbench's warm-up", "--warmup DURATION"),
    "--rand-seed": ("sysbench's random seed", "--seed N"),
}
_PREFIXES = {
    "--mysql-": ("a sysbench MySQL connection option",
                 "--target mysql://user[:password]@host[:port]/db[?socket=PATH]"),
    "--pgsql-": ("a sysbench PostgreSQL connection option",
                 "--target postgresql://user[:password]@host[:port]/db"),
}  # fmt: skip


def peer_flag(option: str) -> tuple[str, str] | None:
    """(what `option` is in pgbench or sysbench, the dbscale equivalent), or None."""
    name = option.split("=", 1)[0]
    if name in PEER_FLAGS:
        return PEER_FLAGS[name]
    return next((v for prefix, v in _PREFIXES.items() if name.startswith(prefix)), None)
