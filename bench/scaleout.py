"""One run's clients from this process against the same run over 2 Ray workers on this host,
alternating (the order swapped each round): TPS, the run's client CPU per transaction (the
engine's processes: this one, or the two workers), and the Ray daemons' CPU per transaction
during the Ray runs (raylets, GCS and the rest: the Ray path's own overhead). A two-node Ray
cluster on 127.0.0.1 (a CPU-less head and two one-CPU nodes) is started for the bench.

    bash bench/scaleout.sh [--rounds 5] [--clients 8] [--threads 2] [--duration 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from significance import significance  # bench/significance.py, beside this script

REPO = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def ray_daemon_ticks() -> int:
    """CPU ticks so far of Ray's own processes (not the workers: their CPU is in the record)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if ("ray/core/src" in cmdline or "raylet" in cmdline or "gcs_server" in cmdline
                or "ray/_private" in cmdline or "ray/dashboard" in cmdline):  # fmt: skip
            total += int(stat[11]) + int(stat[12])
    return total


def run(args: argparse.Namespace, url: str, extra: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        before = ray_daemon_ticks()
        subprocess.run(
            [sys.executable, "-m", "dbscale", "run", args.workload, "--target", url,
             "--clients", str(args.clients), "--threads", str(args.threads),
             "-T", f"{args.duration}s", "--out", f"{out}/r",
             *extra], check=True, capture_output=True, text=True,
        )  # fmt: skip
        daemons_s = (ray_daemon_ticks() - before) / CLK_TCK
        record = json.loads((Path(out) / "r" / "runs.jsonl").read_text().splitlines()[-1])
    txns = record["transactions"]
    return {"tps": record["tps"], "cpu_us": record["client_cpu_us_per_txn"],
            "daemons_us": daemons_s * 1e6 / txns if extra else 0.0}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=10.0)
    # The same engine threads in total (split among the workers), on this 2-core host.
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workload", default="tpcb-select-only")
    args = parser.parse_args()
    from ray.cluster_utils import Cluster

    memory = 80 * 1024 * 1024
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False, "object_store_memory": memory,
        "node_ip_address": "127.0.0.1"})  # fmt: skip
    for _ in range(2):
        cluster.add_node(num_cpus=1, object_store_memory=memory, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    local: list[dict[str, float]] = []
    ray: list[dict[str, float]] = []
    try:
        for round_ in range(args.rounds):
            order = ("local", "ray") if round_ % 2 == 0 else ("ray", "local")
            for how in order:
                extra = ["--ray", str(cluster.address), "--workers", "2"] if how == "ray" else []
                got = run(args, args.url, extra)
                (ray if how == "ray" else local).append(got)
                print(f"round {round_ + 1} {how:>5}: {got['tps']:,.0f} tps, client CPU "
                      f"{got['cpu_us']:.1f} us/txn, Ray daemons {got['daemons_us']:.1f} us/txn",
                      flush=True)  # fmt: skip
    finally:
        cluster.shutdown()
    a, b = [r["tps"] for r in local], [r["tps"] for r in ray]
    print(f"\n{args.workload}, {args.clients} clients, {args.duration:g} s, {args.rounds} rounds "
          "(medians; change = 2 Ray workers vs one process)")  # fmt: skip
    print(
        f"  TPS            one process {statistics.median(a):,.0f}  Ray {statistics.median(b):,.0f}"
        f"  ratio {statistics.median(b) / statistics.median(a):.3f}x  {significance(a, b)}"
    )
    ca, cb = [r["cpu_us"] for r in local], [r["cpu_us"] for r in ray]
    daemons = statistics.median(r["daemons_us"] for r in ray)
    print(
        f"  client CPU     one process {statistics.median(ca):.2f} us/txn  Ray workers "
        f"{statistics.median(cb):.2f} us/txn  + Ray daemons {daemons:.2f} us/txn"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
