"""dbscale's TPC-C against go-tpc v1.0.7 on MariaDB: the same warehouses, workers and duration,
nowait, the two tools alternating (the order swapped each round) so drift hits both alike.

Measured per tool and round: load wall time (go-tpc `prepare --no-check -T N`, dbscale `prepare
tpcc --set loaders=N`, each into a freshly created database), tpmC of a nowait run, and client CPU
per New-Order (user + system of the whole process, from getrusage; dbscale's engine-only CPU is
printed beside it). Ratios are dbscale / go-tpc with 95% intervals (ratio of geometric means).
Targets (issue 16): load <= 0.6x, tpmC >= 1.15x, CPU per New-Order <= 0.4x. dbscale's load rate in
warehouses per minute is also measured on PostgreSQL (go-tpc 1.0.7 has no PostgreSQL driver)."""

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
GO_TPC = str(REPO / ".cache" / "bin" / "go-tpc")
DBSCALE = [sys.executable, "-m", "dbscale"]


@dataclass
class Sample:
    load_s: float
    tpmc: float
    new_orders: int
    cpu_s: float  # the whole run process
    engine_cpu_s: float | None = None  # dbscale: the engine's threads during the window

    @property
    def cpu_ms_per_new_order(self) -> float:
        return 1000 * self.cpu_s / max(self.new_orders, 1)


def fresh_database(url: str) -> None:
    parts = urlsplit(url)
    db = parts.path.lstrip("/")
    timed(["mariadb", "--no-defaults", "-h", parts.hostname or "127.0.0.1", "-P",
           str(parts.port or 3306), "-u", parts.username or "root", "-e",
           f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"])  # fmt: skip


def go_tpc_args(url: str) -> list[str]:
    parts = urlsplit(url)
    return ["tpcc", "-d", "mysql", "-H", parts.hostname or "127.0.0.1", "-P",
            str(parts.port or 3306), "-U", parts.username or "root", "-D",
            parts.path.lstrip("/")]  # fmt: skip


def go_tpc_round(args: argparse.Namespace, url: str) -> Sample:
    fresh_database(url)
    base = [GO_TPC, *go_tpc_args(url), "--warehouses", str(args.warehouses), "-T",
            str(args.threads)]  # fmt: skip
    _, _, load_s = timed([*base, "prepare", "--no-check"])
    out, cpu, _ = timed([*base, "run", "--time", f"{args.duration}s"])
    tpmc = float(re.findall(r"tpmC: ([0-9.]+)", out)[-1])
    new_orders = int(re.findall(r"\[Summary\] NEW_ORDER - .*?Count: (\d+)", out)[-1])
    return Sample(load_s, tpmc, new_orders, cpu)


def dbscale_prepare(args: argparse.Namespace, url: str) -> list[str]:
    return [*DBSCALE, "prepare", "tpcc", "--target", url, "--set",
            f"warehouses={args.warehouses}", "--set", f"loaders={args.threads}",
            "--tls", "disable"]  # fmt: skip


def dbscale_round(args: argparse.Namespace, url: str, tmp: Path) -> Sample:
    fresh_database(url)
    _, _, load_s = timed(dbscale_prepare(args, url))
    out_dir = tmp / f"run{len(list(tmp.iterdir()))}"
    _, cpu, _ = timed([*DBSCALE, "run", "tpcc", "--target", url, "--tls", "disable", "--set",
                       "wait=false", "--clients", str(args.threads), "--duration",
                       f"{args.duration}s", "--out", str(out_dir)])  # fmt: skip
    run = json.loads((out_dir / "runs.jsonl").read_text().splitlines()[-1])
    new_orders = run["transaction_types"]["new_order"]["transactions"]
    return Sample(load_s, run["tpcc"]["tpmc"], new_orders, cpu, run["client_cpu_s"]["total"])


def pg_load_rate(args: argparse.Namespace, url: str) -> list[float]:
    rates = []
    for _ in range(args.repeat):
        _, _, wall = timed(dbscale_prepare(args, url))
        rates.append(60 * args.warehouses / wall)
    return rates


def line(name: str, unit: str, ours: list[float], theirs: list[float], width: int = 26) -> None:
    """One figure of both tools: medians, their ratio and the change with its interval."""
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"  {name:<{width}} dbscale {statistics.median(ours):9.2f}  go-tpc "
          f"{statistics.median(theirs):9.2f} {unit:<6} ratio {ratio:5.2f}x  "
          f"{significance(theirs, ours)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mysql-url", required=True)
    parser.add_argument("--pg-url")
    parser.add_argument("--warehouses", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ours: list[Sample] = []
    theirs: list[Sample] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            order = ("go-tpc", "dbscale") if r % 2 == 0 else ("dbscale", "go-tpc")
            for tool in order:
                if tool == "go-tpc":
                    theirs.append(go_tpc_round(args, args.mysql_url))
                else:
                    ours.append(dbscale_round(args, args.mysql_url, Path(tmp)))
                s = (theirs if tool == "go-tpc" else ours)[-1]
                print(f"round {r + 1} {tool:<7}: load {s.load_s:5.2f} s, tpmC {s.tpmc:8.1f}, "
                      f"{s.new_orders} New-Orders, client CPU {s.cpu_s:5.2f} s "
                      f"({s.cpu_ms_per_new_order:.3f} ms per New-Order)", flush=True)  # fmt: skip
    print(
        f"\nMariaDB, {args.warehouses} warehouses, {args.threads} workers, nowait, "
        f"{args.duration} s runs, {args.repeat} rounds (medians; change = dbscale vs go-tpc)"
    )
    line("load time (target <=0.6x)", "s", [s.load_s for s in ours], [s.load_s for s in theirs])
    line("tpmC (target >=1.15x)", "tpmC", [s.tpmc for s in ours], [s.tpmc for s in theirs])
    line("CPU/New-Order (<=0.4x)", "ms", [s.cpu_ms_per_new_order for s in ours],
         [s.cpu_ms_per_new_order for s in theirs])  # fmt: skip
    engine = [1000 * (s.engine_cpu_s or 0) / max(s.new_orders, 1) for s in ours]
    print(
        f"  dbscale engine threads only: {statistics.median(engine):.3f} ms per New-Order "
        "(the rest is the Python process: start-up, observation, report)"
    )
    load_rate = [60 * args.warehouses / s.load_s for s in ours]
    print(
        f"  load rate, MariaDB: dbscale {statistics.median(load_rate):.1f} warehouses/min, "
        f"go-tpc {statistics.median([60 * args.warehouses / s.load_s for s in theirs]):.1f}"
    )
    if args.pg_url:
        rates = pg_load_rate(args, args.pg_url)
        print(f"  load rate, PostgreSQL: dbscale {statistics.median(rates):.1f} warehouses/min")


if __name__ == "__main__":
    main()
