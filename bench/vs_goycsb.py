"""dbscale's YCSB core workloads against go-ycsb v1.0.3: the same workload file, records,
threads and operations, the two tools alternating (the order swapped each round) so drift hits
both alike, each loading its own table into a freshly created database.

Measured per tool, server, workload and round: load wall time (go-ycsb `load`, dbscale
`prepare`), operations per second of a run of `--operations` operations (go-ycsb
`operationcount`, dbscale `-t operations/threads` per client: go-ycsb v1.0.3 does not stop on
`maxexecutiontime`), and client CPU per operation (user + system of the whole process, from
getrusage; dbscale's engine threads alone printed beside it). Ratios are dbscale / go-ycsb with
95% intervals. Goal (issue 46): at least go-ycsb's throughput at no more than its client CPU."""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from significance import significance  # bench/significance.py, beside this script
from tools import timed  # bench/tools.py, beside this script

REPO = Path(__file__).resolve().parents[1]
GO_YCSB = str(REPO / ".cache" / "bin" / "go-ycsb")
WORKLOADS = REPO / ".cache" / "go-ycsb-workloads"
DBSCALE = [sys.executable, "-m", "dbscale"]
TOTAL = re.compile(r"^TOTAL\s+- Takes\(s\): ([\d.]+), Count: (\d+), OPS: ([\d.]+)", re.M)


@dataclass
class Sample:
    load_s: float
    ops: float  # operations per second
    operations: int
    cpu_s: float  # the whole run process
    engine_cpu_s: float | None = None  # dbscale: the engine's threads during the window

    @property
    def cpu_us_per_op(self) -> float:
        return 1e6 * self.cpu_s / max(self.operations, 1)


def fresh_database(url: str) -> None:
    parts = urlsplit(url)
    db = parts.path.lstrip("/")
    host, user = parts.hostname or "127.0.0.1", parts.username
    if parts.scheme.startswith("mysql"):
        reset = f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
        timed(["mariadb", "--no-defaults", "-h", host, "-P", str(parts.port or 3306), "-u",
               user or "root", "-e", reset])  # fmt: skip
        return
    for sql in (f"DROP DATABASE IF EXISTS {db} WITH (FORCE)", f"CREATE DATABASE {db}"):
        timed(["psql", "-X", "-q", "-h", host, "-p", str(parts.port or 5432), "-U",
               user or "postgres", "-d", "postgres", "-c", sql])  # fmt: skip


def go_ycsb_args(url: str) -> list[str]:
    parts = urlsplit(url)
    if parts.scheme.startswith("mysql"):
        driver, prefix = "mysql", "mysql"
    else:
        driver, prefix = "postgresql", "pg"
    port = parts.port or (3306 if driver == "mysql" else 5432)
    args = [driver, "-p", f"{prefix}.host={parts.hostname or '127.0.0.1'}", "-p",
            f"{prefix}.port={port}", "-p", f"{prefix}.user={parts.username or 'root'}", "-p",
            f"{prefix}.db={parts.path.lstrip('/')}"]  # fmt: skip
    if prefix == "pg":
        args += ["-p", "pg.sslmode=disable"]
    return args


def go_ycsb_round(args: argparse.Namespace, url: str, workload: str) -> Sample:
    fresh_database(url)
    common = ["-P", str(WORKLOADS / f"workload{workload}"), "-p", f"recordcount={args.records}",
              "-p", f"threadcount={args.threads}"]  # fmt: skip
    load, _, load_s = timed([GO_YCSB, "load", *go_ycsb_args(url), *common])
    if TOTAL.search(load) is None:
        sys.exit(f"error: go-ycsb load printed no TOTAL line:\n{load}")
    out, cpu, _ = timed([GO_YCSB, "run", *go_ycsb_args(url), *common, "-p",
                         f"operationcount={args.operations}"])  # fmt: skip
    found = TOTAL.findall(out)
    if not found:
        sys.exit(f"error: go-ycsb run printed no TOTAL line:\n{out}")
    _, count, ops = found[-1]
    return Sample(load_s, float(ops), int(count), cpu)


def dbscale_round(args: argparse.Namespace, url: str, workload: str, tmp: Path) -> Sample:
    fresh_database(url)
    name = f"ycsb:{workload}"
    target = ["--target", url, "--tls", "disable"]
    _, _, load_s = timed([*DBSCALE, "prepare", name, *target, "--set",
                          f"recordcount={args.records}"])  # fmt: skip
    out_dir = tmp / f"run{len(list(tmp.iterdir()))}"
    per_client = args.operations // args.threads
    _, cpu, _ = timed([*DBSCALE, "run", name, *target, "--clients", str(args.threads),
                       "--transactions", str(per_client), "--out", str(out_dir)])  # fmt: skip
    run = json.loads((out_dir / "runs.jsonl").read_text().splitlines()[-1])
    return Sample(load_s, run["tps"], run["transactions"], cpu, run["client_cpu_s"]["total"])


def line(name: str, unit: str, ours: list[float], theirs: list[float]) -> None:
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"    {name:<24} dbscale {statistics.median(ours):10.2f}  go-ycsb "
          f"{statistics.median(theirs):10.2f} {unit:<5} ratio {ratio:5.2f}x  "
          f"{significance(theirs, ours)}")  # fmt: skip


def compare(args: argparse.Namespace, server: str, url: str, workload: str, tmp: Path) -> None:
    ours: list[Sample] = []
    theirs: list[Sample] = []
    for r in range(args.repeat):
        order = ("go-ycsb", "dbscale") if r % 2 == 0 else ("dbscale", "go-ycsb")
        for tool in order:
            if tool == "go-ycsb":
                theirs.append(go_ycsb_round(args, url, workload))
            else:
                ours.append(dbscale_round(args, url, workload, tmp))
            s = (theirs if tool == "go-ycsb" else ours)[-1]
            print(f"  {server} {workload} round {r + 1} {tool:<7}: load {s.load_s:5.2f} s, "
                  f"{s.ops:9.1f} ops/s, {s.operations} ops, client CPU {s.cpu_s:5.2f} s "
                  f"({s.cpu_us_per_op:.1f} us/op)", flush=True)  # fmt: skip
    print(f"  {server}, workload {workload}, {args.records} records, {args.threads} threads, "
          f"{args.operations} operations, {args.repeat} rounds (medians):")  # fmt: skip
    line("load time", "s", [s.load_s for s in ours], [s.load_s for s in theirs])
    line("throughput (>= 1x)", "ops/s", [s.ops for s in ours], [s.ops for s in theirs])
    line("client CPU/op (<= 1x)", "us", [s.cpu_us_per_op for s in ours],
         [s.cpu_us_per_op for s in theirs])  # fmt: skip
    engine = [1e6 * (s.engine_cpu_s or 0) / max(s.operations, 1) for s in ours]
    print(
        f"    dbscale engine threads only: {statistics.median(engine):.1f} us/op "
        "(the rest is the Python process: start-up, observation, report)\n",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mysql-url")
    parser.add_argument("--pg-url")
    parser.add_argument("--workloads", default="a,c", help="letters, comma-separated")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--operations", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    servers = [(n, u) for n, u in (("MariaDB", args.mysql_url), ("PostgreSQL", args.pg_url)) if u]
    with tempfile.TemporaryDirectory() as tmp:
        for server, url in servers:
            for workload in args.workloads.split(","):
                compare(args, server, url, workload.strip(), Path(tmp))


if __name__ == "__main__":
    main()
