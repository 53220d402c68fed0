"""`dbscale micro net` streams against iperf3 (`-J -P N`) on loopback, alternating (the order
swapped each round) so drift hits both alike: the same stream count and duration, the mean
aggregate throughput of each, and the ratio with a 95% interval.

    bash bench/vs_iperf3.sh [--rounds 5] [--streams 2] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from significance import significance  # bench/significance.py, beside this script

from dbscale import core

REPO = Path(__file__).resolve().parents[1]


def iperf3_gbps(port: int, streams: int, seconds: float) -> float:
    done = subprocess.run(
        ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-P", str(streams), "-t", f"{seconds:g}",
         "-J"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(done.stdout)
    return float(report["end"]["sum_received"]["bits_per_second"]) / 1e9


def dbscale_gbps(addr: str, streams: int, seconds: float) -> float:
    figures = core.micro_net_streams(addr, streams, seconds, 16 << 20)
    return figures.mean_gbps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--streams", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--port", type=int, default=15201)
    args = parser.parse_args()
    server = core.NetServer("127.0.0.1", 0)
    iperf = subprocess.Popen(["iperf3", "-s", "-p", str(args.port)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(1.0)
    ours: list[float] = []
    theirs: list[float] = []
    try:
        for round_ in range(args.rounds):
            order = ("dbscale", "iperf3") if round_ % 2 == 0 else ("iperf3", "dbscale")
            for tool in order:
                if tool == "dbscale":
                    ours.append(dbscale_gbps(server.addr, args.streams, args.seconds))
                else:
                    theirs.append(iperf3_gbps(args.port, args.streams, args.seconds))
                value = ours[-1] if tool == "dbscale" else theirs[-1]
                print(f"round {round_ + 1} {tool:>7}: {value:.2f} Gbit/s", flush=True)
    finally:
        server.stop()
        iperf.terminate()
        iperf.wait(timeout=10)
    a, b = statistics.median(theirs), statistics.median(ours)
    change = significance(theirs, ours)
    print(f"\nloopback, {args.streams} streams, {args.seconds:g} s, {args.rounds} rounds (medians; "
          f"change = dbscale vs iperf3)")  # fmt: skip
    print(f"  throughput  dbscale {b:.2f}  iperf3 {a:.2f} Gbit/s  ratio {b / a:.2f}x  {change}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
