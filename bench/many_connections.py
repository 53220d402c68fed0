"""How dbscale's memory and connect time grow with connections: a private MariaDB with its thread
pool (`thread_handling=pool-of-threads`, max_connections 12000) and sysbench point selects at
rising client counts, each run a fresh `dbscale run` process so its peak RSS (getrusage of the
child) is its own. Connect time is the process's wall time less the measured duration and the
fixed cost of a small run. A least-squares line through the points extrapolates to 10,000
connections; the target (issue 18) is under 1 GiB there.

    bash bench/many_connections.sh [--clients 500,1000,2000,4000] [--duration 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from dbscale.targets.local.mariadb import LocalMariaDB

REPO = Path(__file__).resolve().parents[1]
DBSCALE = [sys.executable, "-m", "dbscale"]
SMALL = ("--set", "tables=1", "--set", "table_size=1000")
TARGET_CONNECTIONS = 10_000
TARGET_RSS_MIB = 1024


def run(url: str, clients: int, duration: float, out: Path) -> tuple[float, float, float]:
    """(peak RSS MiB, wall s, connect s) of one `dbscale run` with `clients` connections."""
    shutil.rmtree(out, ignore_errors=True)
    argv = [*DBSCALE, "run", "sysbench:oltp_point_select", "--target", url, *SMALL,
            "-c", str(clients), "-j", "2", "-T", f"{duration}s", "-M", "prepared",
            "--output-format", "sysbench", "--out", str(out)]  # fmt: skip
    begun = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - begun
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{clients} clients: dbscale failed: {child.stderr.read()[-2000:]}")
    return usage.ru_maxrss / 1024, wall, wall - duration


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares (intercept, slope)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    return my - slope * mx, slope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="500,1000,2000,4000")
    parser.add_argument("--duration", type=float, default=3.0)
    args = parser.parse_args()
    levels = [int(c) for c in args.clients.split(",")]
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits it
    base = Path("/var/tmp") / f"dbscale-bench-conns-{os.getpid()}"
    settings = {"max_connections": 12_000, "thread_handling": "pool-of-threads",
                "open_files_limit": 30_000, "innodb_buffer_pool_size": "128M"}  # fmt: skip
    server = LocalMariaDB(base, settings=settings)
    try:
        with server:
            url = server.url
            subprocess.run([*DBSCALE, "prepare", "sysbench:oltp_point_select", "--target", url,
                            *SMALL], check=True, capture_output=True)  # fmt: skip
            out = base / "results"
            _, baseline_wall, baseline = run(url, 8, args.duration, out)
            print(
                f"MariaDB thread pool, sysbench point selects, {args.duration:g} s runs, 2 "
                f"engine threads; a run of 8 clients takes {baseline_wall:.2f} s of wall time"
            )
            print(f"{'clients':>8} {'peak RSS MiB':>13} {'wall s':>8} {'connect s':>10} "
                  f"{'connections/s':>14}")  # fmt: skip
            rss, connect = [], []
            for clients in levels:
                peak, wall, overhead = run(url, clients, args.duration, out)
                took = max(overhead - baseline, 1e-3)
                rss.append(peak)
                connect.append(took)
                print(f"{clients:>8} {peak:>13.1f} {wall:>8.2f} {took:>10.2f} "
                      f"{clients / took:>14.0f}")  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)
    xs = [float(c) for c in levels]
    rss0, rss_slope = fit(xs, rss)
    t0, t_slope = fit(xs, connect)
    at = rss0 + rss_slope * TARGET_CONNECTIONS
    print(
        f"RSS = {rss0:.1f} MiB + {rss_slope * 1024:.1f} KiB per connection; "
        f"connect = {t0:.2f} s + {t_slope * 1000:.3f} ms per connection"
    )
    verdict = "met" if at < TARGET_RSS_MIB else "NOT met"
    print(
        f"extrapolated to {TARGET_CONNECTIONS:,} connections: {at:.0f} MiB RSS "
        f"(target < {TARGET_RSS_MIB} MiB: {verdict}), connect {t0 + t_slope * 1e4:.1f} s"
    )


if __name__ == "__main__":
    main()
