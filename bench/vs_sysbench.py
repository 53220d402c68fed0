#!/usr/bin/env python3
"""dbscale against sysbench (Debian's 1.0.20) on the same server, the same sbtest tables,
threads, duration and rand_type, alternating runs so drift hits both alike. For each workload it
prints TPS, QPS, p95 latency and client CPU per event for both tools with their ratios
(dbscale / sysbench), and first the time each tool takes to prepare the tables.

Client CPU: sysbench's is the whole process (getrusage of the child). dbscale's is given two ways:
the engine's own measured window (`client_cpu_s` in its result, what the run itself cost) and the
whole process including Python's start-up (an upper bound).

TLS is off for both: dbscale runs with `--tls disable`, sysbench with PGSSLMODE=disable (libpq's
default would encrypt) and its mysql driver's default (no TLS).
dbscale uses server-side prepared statements (-M prepared), as sysbench does by default.

Usage: bench/vs_sysbench.py --url mysql://root@127.0.0.1:3306/sbtest
           [--url postgresql://postgres@127.0.0.1:5432/sbtest] [--tables 4] [--table-size 100000]
           [--threads 8] [--duration 10] [--repeat 3] [--rand-type special]
           [--floor] [--syscalls] [--prepare-only | --skip-prepare]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import floor_client  # bench/floor_client.py, beside this script
import syscall_counts  # bench/syscall_counts.py, beside this script
from significance import significance  # bench/significance.py, beside this script
from tools import server_cpu_s, timed, tool_env  # bench/tools.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
DBSCALE = [str(ROOT / ".venv" / "bin" / "dbscale")]
WORKLOADS = "oltp_read_write,oltp_write_only,oltp_point_select"


@dataclass
class Prepared:
    """Median seconds of the prepares: each tool's wall time, dbscale's core load time, and the
    server's CPU during each tool's."""

    sysbench_s: float
    dbscale_s: float
    core_s: float
    sysbench_server_cpu_s: float
    dbscale_server_cpu_s: float


@dataclass
class Sample:
    tool: str
    server: str
    workload: str
    tps: float
    qps: float
    p95_ms: float
    events: int
    cpu_s: float
    window_cpu_s: float | None = None
    syscalls: dict[str, int] | None = None

    @property
    def cpu_us_per_event(self) -> float:
        return self.cpu_s * 1e6 / max(self.events, 1)

    @property
    def window_cpu_us_per_event(self) -> float | None:
        if self.window_cpu_s is None:
            return None
        return self.window_cpu_s * 1e6 / max(self.events, 1)


def server_name(url: str) -> str:
    return "MariaDB" if urlsplit(url).scheme in ("mysql", "mariadb") else "PostgreSQL"


def sysbench_connection(url: str) -> list[str]:
    """sysbench's options for the server a URL names (TLS off: 1.0.20's default)."""
    parts = urlsplit(url)
    db = unquote(parts.path.lstrip("/"))
    if server_name(url) == "MariaDB":
        args = ["--db-driver=mysql", f"--mysql-host={parts.hostname or '127.0.0.1'}",
                f"--mysql-port={parts.port or 3306}", f"--mysql-user={parts.username or 'root'}",
                f"--mysql-db={db}"]  # fmt: skip
        if parts.password:
            args.append(f"--mysql-password={unquote(parts.password)}")
        return args
    args = ["--db-driver=pgsql", f"--pgsql-host={parts.hostname or '127.0.0.1'}",
            f"--pgsql-port={parts.port or 5432}", f"--pgsql-user={parts.username or 'postgres'}",
            f"--pgsql-db={db}"]  # fmt: skip
    if parts.password:
        args.append(f"--pgsql-password={unquote(parts.password)}")
    return args


def sysbench(args: argparse.Namespace, url: str, workload: str, *extra: str) -> list[str]:
    return ["sysbench", workload, *sysbench_connection(url), f"--tables={args.tables}",
            f"--table-size={args.table_size}", f"--rand-type={args.rand_type}", *extra]  # fmt: skip


def dbscale_sizes(args: argparse.Namespace) -> list[str]:
    return ["--set", f"tables={args.tables}", "--set", f"table_size={args.table_size}",
            "--set", f"rand_type={args.rand_type}"]  # fmt: skip


def prepare_times(args: argparse.Namespace, url: str) -> Prepared:
    """Median wall seconds, over `--repeat` alternating rounds, of `sysbench prepare` (threads =
    tables, its fastest) and of `dbscale prepare` (whole command, and the core's own load time),
    and the CPU the server spent on each (a load's floor: the server's CPU over its cores).
    Each tool starts from no tables; dbscale's are left for the runs."""
    rounds: list[dict[str, float]] = []
    port = urlsplit(url).port or 0
    for rep in range(args.repeat):
        times: dict[str, float] = {}
        for tool in ("sysbench", "dbscale") if rep % 2 == 0 else ("dbscale", "sysbench"):
            subprocess.run(sysbench(args, url, "oltp_read_write", "cleanup"), capture_output=True)
            server_before = server_cpu_s(port)
            if tool == "sysbench":
                threads = f"--threads={min(args.tables, args.threads)}"
                _, _, times["sysbench"] = timed(
                    sysbench(args, url, "oltp_read_write", threads, "prepare")
                )
            else:
                out, _, times["dbscale"] = timed([
                    *DBSCALE, "prepare", "sysbench:oltp_read_write", "--target", url,
                    "--tls", "disable", *dbscale_sizes(args)])  # fmt: skip
                core = re.search(r"prepare done: \d+ rows in ([\d.]+) s", out)
                times["core"] = float(core.group(1)) if core else float("nan")
            server_after = server_cpu_s(port)
            times[f"{tool} server"] = float("nan")
            if server_before is not None and server_after is not None:
                times[f"{tool} server"] = server_after - server_before
        print(f"  {server_name(url):10} prepare round {rep + 1}: sysbench "
              f"{times['sysbench']:.2f} s (server CPU {times['sysbench server']:.2f} s), dbscale "
              f"{times['dbscale']:.2f} s (core {times['core']:.2f} s, server CPU "
              f"{times['dbscale server']:.2f} s)", flush=True)  # fmt: skip
        rounds.append(times)
    if args.repeat % 2 == 0:  # the last round ended with sysbench's tables: reload dbscale's
        subprocess.run(sysbench(args, url, "oltp_read_write", "cleanup"), capture_output=True)
        timed([*DBSCALE, "prepare", "sysbench:oltp_read_write", "--target", url, "--tls",
               "disable", *dbscale_sizes(args)])  # fmt: skip
    keys = ("sysbench", "dbscale", "core", "sysbench server", "dbscale server")
    return Prepared(*(statistics.median(r[k] for r in rounds) for k in keys))


def run_tool(cmd: list[str], count: bool) -> tuple[str, float, dict[str, int] | None]:
    """Output, CPU seconds and, with `count`, syscalls under perf stat (CPU not measured then)."""
    if count:
        out, counts = syscall_counts.counted(cmd, tool_env(cmd))
        return out, 0.0, counts
    out, cpu, _ = timed(cmd)
    return out, cpu, None


def sysbench_run(args: argparse.Namespace, url: str, workload: str, count: bool = False) -> Sample:
    out, cpu, counts = run_tool(sysbench(args, url, workload, f"--threads={args.threads}",
                                         f"--time={args.duration}", "--percentile=95", "run"),
                                count)  # fmt: skip

    def number(pattern: str) -> float:
        match = re.search(pattern, out)
        if match is None:
            sys.exit(f"error: no {pattern!r} in sysbench's output:\n{out}")
        return float(match.group(1))

    return Sample(
        "sysbench", server_name(url), workload,
        tps=number(r"transactions:\s+\d+\s+\(([\d.]+) per sec"),
        qps=number(r"queries:\s+\d+\s+\(([\d.]+) per sec"),
        p95_ms=number(r"95th percentile:\s+([\d.]+)"),
        events=int(number(r"total number of events:\s+(\d+)")),
        cpu_s=cpu, syscalls=counts,
    )  # fmt: skip


def floor_run(args: argparse.Namespace, url: str, workload: str) -> Sample:
    cmd = floor_client.command(url, args.tables, args.table_size, args.threads, args.duration)
    out, cpu, _ = timed(cmd)
    events, seconds = floor_client.parse(out)
    rate = events / seconds
    return Sample("floor", server_name(url), workload, tps=rate, qps=rate, p95_ms=float("nan"),
                  events=events, cpu_s=cpu)  # fmt: skip


def dbscale_run(
    args: argparse.Namespace, url: str, workload: str, out_dir: Path, count: bool = False
) -> Sample:
    run_dir = out_dir / f"run{len(list(out_dir.iterdir()))}"
    # One worker thread per client, as sysbench runs them: on a small machine shared with the
    # server, the number of client threads decides the client's share of the CPU.
    _, cpu, counts = run_tool([*DBSCALE, "run", f"sysbench:{workload}", "--target", url,
                               "--tls", "disable", "--clients", str(args.threads), "--threads",
                               str(args.threads), "--duration", f"{args.duration}s",
                               "--protocol", "prepared", *dbscale_sizes(args), "--out",
                               str(run_dir)], count)  # fmt: skip
    run = json.loads((run_dir / "runs.jsonl").read_text().splitlines()[-1])
    return Sample(
        "dbscale", server_name(url), workload, tps=run["tps"], qps=run["qps"],
        p95_ms=run["latency_ms"]["p95"], events=run["transactions"], cpu_s=cpu,
        window_cpu_s=run["client_cpu_s"]["total"], syscalls=counts,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", action="append", required=True, help="repeatable")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--table-size", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rand-type", default="special")
    parser.add_argument("--workloads", default=WORKLOADS)
    parser.add_argument("--skip-prepare", action="store_true")
    parser.add_argument("--floor", action="store_true",
                        help="with oltp_point_select, also run the round-trip floor client "
                        "(bench/round_trip_floor.rs): the least CPU per event any client can "
                        "spend")  # fmt: skip
    parser.add_argument("--prepare-only", action="store_true",
                        help="time the prepares only, no workload runs")  # fmt: skip
    parser.add_argument("--syscalls", action="store_true",
                        help="after the timed runs, one run of each tool under perf stat: "
                        "syscalls and context switches per event")  # fmt: skip
    args = parser.parse_args()
    if not shutil.which("sysbench"):
        sys.exit("error: sysbench is not installed\nhint: apt-get install sysbench")
    if args.syscalls and (why := syscall_counts.unavailable()):
        sys.exit(f"error: --syscalls: {why}\nhint: run without --syscalls")
    if args.floor and (why := floor_client.unavailable()):
        sys.exit(f"error: --floor: {why}\nhint: run without --floor")
    prepared: dict[str, Prepared] = {}
    samples: list[Sample] = []
    counted: list[Sample] = []
    with tempfile.TemporaryDirectory(prefix="dbscale-bench-") as tmp:
        for url in args.url:
            name = server_name(url)
            if not args.skip_prepare:
                prepared[name] = prepare_times(args, url)
            for workload in [] if args.prepare_only else args.workloads.split(","):
                samples += measure(args, url, workload, Path(tmp))
                if args.syscalls:
                    counted.append(sysbench_run(args, url, workload, count=True))
                    counted.append(dbscale_run(args, url, workload, Path(tmp), count=True))
    report(samples, prepared, args)
    if counted:
        syscall_counts.print_table([(f"{s.server} {s.workload} {s.tool}", s.events,
                                     s.syscalls or {}) for s in counted])  # fmt: skip


def measure(args: argparse.Namespace, url: str, workload: str, tmp: Path) -> list[Sample]:
    """`--repeat` runs of each tool, alternating which goes first so neither always gets the
    warmer cache; each printed as it ends."""
    samples = []
    tools = ["sysbench", "dbscale"]
    if args.floor and workload == "oltp_point_select":
        tools.append("floor")
    for rep in range(args.repeat):
        for tool in tools if rep % 2 == 0 else tools[::-1]:
            s = (sysbench_run(args, url, workload) if tool == "sysbench"
                 else floor_run(args, url, workload) if tool == "floor"
                 else dbscale_run(args, url, workload, tmp))  # fmt: skip
            samples.append(s)
            window = (f" (window {s.window_cpu_us_per_event:.1f})"
                      if s.window_cpu_s is not None else "")  # fmt: skip
            print(f"  {s.server:10} {workload:18} {tool:8} {s.tps:9.1f} tps {s.qps:10.1f} qps  "
                  f"p95 {s.p95_ms:7.2f} ms  {s.cpu_us_per_event:8.1f} us CPU/event{window}",
                  flush=True)  # fmt: skip
    return samples


def report(samples: list[Sample], prepared: dict[str, Prepared], args: argparse.Namespace) -> None:
    print(f"\n{args.tables} tables x {args.table_size} rows, {args.threads} threads/clients, "
          f"{args.duration} s x {args.repeat}, rand_type {args.rand_type}, TLS off, "
          "server-side prepared statements; medians; ratio = dbscale / sysbench; under each row "
          "dbscale's change against sysbench with the 95% CI of the ratio of geometric means "
          "(Welch, on logs) and Mann-Whitney's p")  # fmt: skip
    if prepared:
        print(f"\n{'server':10} {'sysbench prepare s':>18} {'dbscale prepare s':>17} {'ratio':>6}"
              f" {'dbscale core s':>14} {'ratio':>6}  {'server CPU s: sb':>16} {'db':>5}"
              f" {'ratio':>6}")  # fmt: skip
        for name, p in prepared.items():
            s, d, core = p.sysbench_s, p.dbscale_s, p.core_s
            sb_cpu, db_cpu = p.sysbench_server_cpu_s, p.dbscale_server_cpu_s
            print(f"{name:10} {s:18.2f} {d:17.2f} {d / s:6.2f} {core:14.2f} {core / s:6.2f}  "
                  f"{sb_cpu:16.2f} {db_cpu:5.2f} {db_cpu / sb_cpu:6.2f}")  # fmt: skip
    print(f"\n{'server':10} {'workload':18} {'sb tps':>9} {'db tps':>9} {'ratio':>5}  "
          f"{'sb qps':>9} {'db qps':>9}  {'sb p95':>7} {'db p95':>7}  {'sb us/ev':>8} "
          f"{'db us/ev':>8} {'ratio':>5}  {'db window':>9} {'ratio':>5}")  # fmt: skip
    keys = dict.fromkeys((s.server, s.workload) for s in samples)
    for server, workload in keys:
        mine = [s for s in samples if (s.server, s.workload) == (server, workload)]
        sb = [s for s in mine if s.tool == "sysbench"]
        db = [s for s in mine if s.tool == "dbscale"]

        def med(group: list[Sample], field: str) -> float:
            return statistics.median(float(getattr(s, field) or 0.0) for s in group)

        sb_cpu, db_cpu = med(sb, "cpu_us_per_event"), med(db, "cpu_us_per_event")
        db_win = med(db, "window_cpu_us_per_event")
        print(f"{server:10} {workload:18} {med(sb, 'tps'):9.1f} {med(db, 'tps'):9.1f} "
              f"{med(db, 'tps') / med(sb, 'tps'):5.2f}  {med(sb, 'qps'):9.1f} "
              f"{med(db, 'qps'):9.1f}  {med(sb, 'p95_ms'):7.2f} {med(db, 'p95_ms'):7.2f}  "
              f"{sb_cpu:8.1f} {db_cpu:8.1f} {db_cpu / sb_cpu:5.2f}  {db_win:9.1f} "
              f"{db_win / sb_cpu:5.2f}")  # fmt: skip
        print(f"{'':29} tps {significance([s.tps for s in sb], [s.tps for s in db])};  "
              "window CPU/event " + significance(
                  [s.cpu_us_per_event for s in sb],
                  [s.window_cpu_us_per_event or 0.0 for s in db]))  # fmt: skip
        floor = [s for s in mine if s.tool == "floor"]
        if floor:
            floor_cpu = med(floor, "cpu_us_per_event")
            print(f"{'':29} round-trip floor: {med(floor, 'tps'):.1f} events/s, "
                  f"{floor_cpu:.1f} us CPU/event = {floor_cpu / sb_cpu:.2f}x sysbench's; "
                  "CPU/event " + significance([s.cpu_us_per_event for s in sb],
                                              [s.cpu_us_per_event for s in floor]))  # fmt: skip


if __name__ == "__main__":
    main()
