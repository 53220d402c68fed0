"""`dbscale micro net`'s request/response against sockperf's TCP ping-pong on loopback,
alternating (the order swapped each round): transactions per second and the round trip's p50 and
p99 of each, medians over the rounds and the ratio with a 95% interval. sockperf's smallest
message is 14 bytes (its header), dbscale's is 1 byte, as netperf's TCP_RR; both wait for each
answer before the next request, on one connection.

    bash bench/vs_sockperf.sh [--rounds 5] [--seconds 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time

from significance import significance  # bench/significance.py, beside this script

from dbscale import core

RUNTIME = re.compile(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; "
                     r"ReceivedMessages=(\d+)")  # fmt: skip
PERCENTILE = re.compile(r"percentile (\d+\.\d+) =\s+([\d.]+)")


def sockperf_rr(port: int, seconds: float) -> dict[str, float]:
    done = subprocess.run(
        ["sockperf", "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", str(port), "-t",
         f"{seconds:g}", "-m", "14", "--full-rtt"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    found = RUNTIME.search(text)
    assert found is not None, text[-2000:]
    percentiles = {p: float(v) for p, v in PERCENTILE.findall(text)}
    return {"rate": int(found.group(2)) / float(found.group(1)),
            "p50": percentiles["50.000"], "p99": percentiles["99.000"]}  # fmt: skip


def dbscale_rr(addr: str, seconds: float) -> dict[str, float]:
    rr = core.micro_net_rr(addr, seconds)
    return {"rate": rr.transactions_per_s, "p50": rr.p50_us, "p99": rr.p99_us}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--port", type=int, default=11111)
    args = parser.parse_args()
    server = core.NetServer("127.0.0.1", 0)
    peer = subprocess.Popen(["sockperf", "server", "--tcp", "-i", "127.0.0.1", "-p",
                             str(args.port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(1.0)
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    try:
        for round_ in range(args.rounds):
            order = ("dbscale", "sockperf") if round_ % 2 == 0 else ("sockperf", "dbscale")
            for tool in order:
                if tool == "dbscale":
                    ours.append(dbscale_rr(server.addr, args.seconds))
                else:
                    theirs.append(sockperf_rr(args.port, args.seconds))
                got = (ours if tool == "dbscale" else theirs)[-1]
                print(f"round {round_ + 1} {tool:>8}: {got['rate']:,.0f}/s, p50 "
                      f"{got['p50']:.1f} us, p99 {got['p99']:.1f} us", flush=True)  # fmt: skip
    finally:
        server.stop()
        peer.terminate()
        peer.wait(timeout=10)
    print(f"\nloopback request/response, {args.seconds:g} s, {args.rounds} rounds (medians; "
          "change = dbscale vs sockperf)")  # fmt: skip
    for key, label in (("rate", "transactions/s"), ("p50", "p50 us"), ("p99", "p99 us")):
        a = [t[key] for t in theirs]
        b = [o[key] for o in ours]
        ratio = statistics.median(b) / statistics.median(a)
        print(
            f"  {label:<15} dbscale {statistics.median(b):>10,.1f}  sockperf "
            f"{statistics.median(a):>10,.1f}  ratio {ratio:.2f}x  {significance(a, b)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
