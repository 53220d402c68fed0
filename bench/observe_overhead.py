#!/usr/bin/env python3
"""What observation costs: the same short run with and without it, alternating (on, off, off, on,
...) so drift hits both alike. Prints TPS and client CPU per transaction for both, their ratio,
and what the observer itself used (its thread's CPU, its queries per second to the server).

Client CPU is the engine's measured window (`client_cpu_s`, getrusage of the whole dbscale
process), so with observation on it includes the observer thread.

Usage: bench/observe_overhead.py --url postgresql://postgres@127.0.0.1:5432/postgres
       [--scale 1] [--clients 8] [--duration 5] [--repeat 4] [--workloads tpcb-select-only,tpcb]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from dbscale import core
from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig
from dbscale.observe.host import client_host_facts
from dbscale.observe.observer import RunObserver


@dataclass
class Sample:
    observed: bool
    tps: float
    cpu_us_per_txn: float
    observer_cpu_cores: float = 0.0
    queries_per_s: float = 0.0


def run(config: RunConfig, observed: bool, host: dict[str, object]) -> Sample:
    observer = RunObserver(config, host=host) if observed else None
    if observer is not None:
        observer.start()
    try:
        handle = core.Run(config)
        while not handle.wait(0.2):
            intervals = handle.poll()
            if observer is not None:
                observer.intervals(intervals)
        native = handle.result()
    finally:
        section = observer.finish(native) if observer is not None else None
    txns = max(native.transactions, 1)
    sample = Sample(observed, native.tps, native.client_cpu_s.total * 1e6 / txns)
    if section is not None:
        sample.observer_cpu_cores = section["overhead"]["observer_cpu_cores"]
        sample.queries_per_s = section["overhead"]["queries_per_s"]
    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--workloads", default="tpcb-select-only,tpcb")
    parser.add_argument("--verbose", action="store_true", help="print every run")
    args = parser.parse_args()
    target = TargetConfig(url=args.url)
    data = RunConfig(
        target=target, workload=WorkloadConfig(name="tpcb", params={"scale": args.scale})
    )
    core.prepare(data)
    host = client_host_facts()
    print(
        f"{args.clients} clients, {args.duration:g} s runs, {args.repeat} pairs, scale {args.scale}"
    )
    print(f"{'workload':<18}{'observe':>8}{'tps':>11}{'±sd':>8}{'cpu µs/txn':>12}"
          f"{'observer cores':>16}{'queries/s':>11}")  # fmt: skip
    for workload in args.workloads.split(","):
        config = RunConfig(
            target=target,
            workload=WorkloadConfig(name=workload, params={"vacuum": False}),
            clients=args.clients,
            duration_s=args.duration,
        )
        samples: list[Sample] = []
        for i in range(args.repeat):
            order = (True, False) if i % 2 == 0 else (False, True)
            for observed in order:
                samples.append(run(config, observed, host))
                if args.verbose:
                    print(f"  {workload} observe={observed}: {samples[-1]}")
        by = {flag: [s for s in samples if s.observed is flag] for flag in (True, False)}
        for flag in (True, False):
            tps = [s.tps for s in by[flag]]
            print(
                f"{workload:<18}{'on' if flag else 'off':>8}{statistics.mean(tps):>11.1f}"
                f"{statistics.stdev(tps) if len(tps) > 1 else 0:>8.1f}"
                f"{statistics.mean(s.cpu_us_per_txn for s in by[flag]):>12.2f}"
                + (
                    f"{statistics.mean(s.observer_cpu_cores for s in by[flag]):>16.4f}"
                    f"{statistics.mean(s.queries_per_s for s in by[flag]):>11.1f}"
                    if flag
                    else ""
                )
            )
        on = statistics.mean(s.tps for s in by[True])
        off = statistics.mean(s.tps for s in by[False])
        cpu_on = statistics.mean(s.cpu_us_per_txn for s in by[True])
        cpu_off = statistics.mean(s.cpu_us_per_txn for s in by[False])
        print(f"{workload:<18}{'on/off':>8}{on / off:>11.3f}{'':>8}{cpu_on / cpu_off:>12.3f}")


if __name__ == "__main__":
    main()
