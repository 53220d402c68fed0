"""sysbench's run options that are not workload parameters in dbscale, and the flag that does
their job, so `--set time=30` (a sysbench habit) is answered with `-T 30s` rather than a list.
"""

from __future__ import annotations

_TARGET = "--target mysql://user[:password]@host[:port]/db[?socket=PATH] (or postgresql://...)"
_FLAGS: dict[str, str] = {
    "time": "-T/--duration (e.g. -T 30s)",
    "events": "-T/--duration (dbscale runs for a time, not a number of events)",
    "threads": "-c/--clients (sysbench's threads are connections; dbscale's --threads are "
    "worker threads, each driving several clients)",
    "report_interval": "nothing: dbscale reports every second; --output-format sysbench prints "
    "sysbench's interval lines",
    "rate": "-R/--rate",
    "percentile": "nothing: p50/p95/p99/p99.9 are all recorded (the sysbench-shaped block shows "
    "the 95th)",
    "warmup_time": "--warmup (a separate, recorded warm-up run)",
    "rand_seed": "--seed",
    "db_ps_mode": "-M/--protocol (prepared, or simple for --db-ps-mode=disable)",
    "db_driver": _TARGET,
    "mysql_ssl": "--tls (disable, require, verify-ca, verify-full)",
    "pgsql_sslmode": "--tls",
    "mysql_ignore_errors": "nothing: deadlocks, lock wait timeouts and 1020 restart the event "
    "as sysbench's default does",
}
_PREFIXES = ("mysql_", "pgsql_")


def flag_for(key: str) -> str | None:
    """The dbscale option that does what sysbench's `--KEY` does, if KEY is one of its run
    options (spelled with `_` or `-`)."""
    name = key.replace("-", "_").lower()
    if name in _FLAGS:
        return _FLAGS[name]
    if name.startswith(_PREFIXES):
        return _TARGET
    return None
