#!/usr/bin/env python3
"""dbscale against pgbench on the same PostgreSQL, same scale, clients, threads, duration and
protocol, alternating runs so drift hits both alike. Prints TPS and client CPU per transaction
for both tools and their ratios (dbscale / pgbench), for TPC-B, select-only and a custom script
(`script`: bench/scripts/custom.sql, run by `pgbench -f` and `dbscale run script:`).

Client CPU: pgbench's is the whole process (getrusage of the child). dbscale's is given two ways:
the engine's own measured window (`client_cpu_s` in its result, what the run itself cost) and
the whole process including Python's start-up (an upper bound).

Usage: bench/vs_pgbench.py --url postgresql://postgres@127.0.0.1:5432/postgres [--scale 10]
       [--clients 8] [--threads 2] [--duration 10] [--repeat 3] [--protocol prepared]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import syscall_counts  # bench/syscall_counts.py, beside this script
from significance import significance  # bench/significance.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
DBSCALE = [str(ROOT / ".venv" / "bin" / "dbscale")]
CUSTOM_SCRIPT = ROOT / "bench" / "scripts" / "custom.sql"


@dataclass
class Sample:
    tool: str
    workload: str
    tps: float
    transactions: int
    cpu_s: float
    window_cpu_s: float | None = None
    syscalls: dict[str, int] | None = None

    @property
    def cpu_us_per_txn(self) -> float:
        return self.cpu_s * 1e6 / max(self.transactions, 1)

    @property
    def window_cpu_us_per_txn(self) -> float | None:
        if self.window_cpu_s is None:
            return None
        return self.window_cpu_s * 1e6 / max(self.transactions, 1)


def timed(
    cmd: list[str], env: dict[str, str] | None = None, count: bool = False
) -> tuple[str, float, dict[str, int] | None]:
    """Runs cmd, returns its output, the CPU seconds it used (user + system) and, with `count`,
    its syscalls and context switches (perf stat adds its own CPU then: such runs are extra)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    counts = None
    if count:
        out, counts = syscall_counts.counted(cmd, env)
    else:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.exit(f"error: {' '.join(cmd[:3])} failed:\n{proc.stdout}\n{proc.stderr}")
        out = proc.stdout + proc.stderr
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu, counts


def pgbench(args: argparse.Namespace, workload: str, count: bool = False) -> Sample:
    # A custom script: -n, as dbscale vacuums nothing for a script of its own; -s sets :scale.
    custom = ["-n", "-s", str(args.scale), "-f", str(CUSTOM_SCRIPT)]
    flag = {"tpcb": [], "tpcb-select-only": ["-S"], "script": custom}[workload]
    # Without -n: both tools vacuum branches and tellers and truncate history before each run,
    # so every run starts from the same state instead of an ever longer history table.
    cmd = [
        "pgbench",
        *flag,
        "-M",
        args.protocol,
        "-c",
        str(args.clients),
        "-j",
        str(args.threads),
        "-T",
        str(args.duration),
        args.url,
    ]
    out, cpu, counts = timed(cmd, count=count)
    tps = float(re.search(r"tps = ([\d.]+) \(without initial", out).group(1))
    txns = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
    return Sample("pgbench", workload, tps, txns, cpu, syscalls=counts)


def dbscale(args: argparse.Namespace, workload: str, out_dir: Path, count: bool = False) -> Sample:
    run_dir = out_dir / f"run{len(list(out_dir.iterdir()))}"
    cmd = [
        *DBSCALE,
        "run",
        f"script:{CUSTOM_SCRIPT}" if workload == "script" else workload,
        "--target",
        args.url,
        "--clients",
        str(args.clients),
        "--threads",
        str(args.threads),
        "--duration",
        f"{args.duration}s",
        "--protocol",
        args.protocol,
        "--out",
        str(run_dir),
        *(["--set", f"scale={args.scale}"] if workload == "script" else []),
    ]
    _, cpu, counts = timed(cmd, env={**os.environ, "NO_COLOR": "1"}, count=count)
    lines = (run_dir / "runs.jsonl").read_text().splitlines()
    run = json.loads(lines[-1])
    return Sample(
        "dbscale",
        workload,
        run["tps"],
        run["transactions"],
        cpu,
        run["client_cpu_s"]["total"],
        syscalls=counts,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--protocol", default="prepared")
    parser.add_argument("--workloads", default="tpcb,tpcb-select-only,script")
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument(
        "--syscalls",
        action="store_true",
        help="after the timed runs, one run of each tool under perf stat: syscalls per transaction",
    )
    args = parser.parse_args()
    if not shutil.which("pgbench"):
        sys.exit("error: pgbench is not installed\nhint: apt-get install postgresql-client")
    if args.syscalls and (why := syscall_counts.unavailable()):
        sys.exit(f"error: --syscalls: {why}\nhint: run without --syscalls")
    if not args.skip_load:
        subprocess.run(
            [*DBSCALE, "prepare", "tpcb", "--target", args.url, "--set", f"scale={args.scale}"],
            check=True,
        )
    samples: list[Sample] = []
    counted: list[Sample] = []
    with tempfile.TemporaryDirectory(prefix="dbscale-bench-") as tmp:
        for workload in args.workloads.split(","):
            # One unrecorded run first: caches, hint bits and the checkpoint cycle settle.
            warm = argparse.Namespace(**{**vars(args), "duration": max(args.duration // 2, 3)})
            pgbench(warm, workload)
            for rep in range(args.repeat):
                # Alternate which tool goes first so neither always gets the warmer cache.
                order = [pgbench, dbscale] if rep % 2 == 0 else [dbscale, pgbench]
                for tool in order:
                    s = tool(args, workload) if tool is pgbench else tool(args, workload, Path(tmp))
                    samples.append(s)
                    extra = f" (window {s.window_cpu_us_per_txn:.2f})" if s.window_cpu_s else ""
                    print(
                        f"  {workload:18} {s.tool:8} {s.tps:10.1f} tps  "
                        f"{s.cpu_us_per_txn:7.2f} us CPU/txn{extra}",
                        flush=True,
                    )
            if args.syscalls:
                counted.append(pgbench(args, workload, count=True))
                counted.append(dbscale(args, workload, Path(tmp), count=True))
    report(samples, args)
    if counted:
        syscall_counts.print_table(
            [(f"{s.workload} {s.tool}", s.transactions, s.syscalls or {}) for s in counted]
        )


def spread(values: list[float]) -> str:
    """Median with the range of the runs, so the noise is visible next to the ratio."""
    return f"{statistics.median(values):.1f} [{min(values):.1f}-{max(values):.1f}]"


def report(samples: list[Sample], args: argparse.Namespace) -> None:
    print(
        f"\nscale {args.scale}, {args.clients} clients, {args.threads} threads, "
        f"{args.duration}s x {args.repeat}, -M {args.protocol}; median [min-max]; "
        "ratio = dbscale / pgbench of medians; change = dbscale against pgbench with the 95% CI "
        "of the ratio of geometric means (Welch, on logs) and Mann-Whitney's p"
    )
    for workload in dict.fromkeys(s.workload for s in samples):
        pg = [s for s in samples if s.workload == workload and s.tool == "pgbench"]
        db = [s for s in samples if s.workload == workload and s.tool == "dbscale"]
        rows = [
            ("tps", [s.tps for s in pg], [s.tps for s in db]),
            (
                "CPU us/txn (process)",
                [s.cpu_us_per_txn for s in pg],
                [s.cpu_us_per_txn for s in db],
            ),
            (
                "CPU us/txn (dbscale window)",
                [s.cpu_us_per_txn for s in pg],
                [s.window_cpu_us_per_txn or 0.0 for s in db],
            ),
        ]
        print(f"{workload}:")
        for name, pg_values, db_values in rows:
            ratio = statistics.median(db_values) / statistics.median(pg_values)
            print(
                f"  {name:28} pgbench {spread(pg_values):>26}  "
                f"dbscale {spread(db_values):>26}  ratio {ratio:5.2f}  "
                f"{significance(pg_values, db_values)}"
            )


if __name__ == "__main__":
    main()
