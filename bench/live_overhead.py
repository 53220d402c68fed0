#!/usr/bin/env python3
"""What watching costs: the same `dbscale run` with `--web` and `/metrics` scraped every second
(as Prometheus would) and without, alternating (on, off, off, on, ...) so drift hits both alike.
Each side's runs are gathered into one results directory, then `dbscale compare` judges TPS and
p99, and the comparison's own statistics (stats/comparison.py) judge the window's client CPU per
transaction; both print their detectable effect.

Usage: bench/live_overhead.py --url postgresql://postgres@127.0.0.1:5432/postgres
       [--clients 4] [--duration 10] [--repeat 10] [--workload tpcb] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from dbscale.stats.comparison import adjust_and_decide, compare_samples, verdict_words
from dbscale.targets.local.server import free_port

ROOT = Path(__file__).resolve().parent.parent
DBSCALE = [str(ROOT / ".venv" / "bin" / "dbscale")]
NOISE_PCT = 2.0  # compare's default noise threshold (a plan's statistics.noise_threshold_pct)


def _scrape_every_second(port: int, stop: threading.Event, counts: list[int]) -> None:
    """A scraper as Prometheus is: /metrics once a second, OpenMetrics asked for."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={
        "Accept": "application/openmetrics-text; version=1.0.0"})  # fmt: skip
    while not stop.wait(1.0):
        try:
            with urllib.request.urlopen(request, timeout=2) as answer:
                answer.read()
            counts[0] += 1
        except OSError:
            pass  # not up yet, or gone


PLAN = """name: live-overhead
targets: [{{name: pg, url: "{url}"}}]
workload: {workload}
load: {{clients: {clients}, duration: {duration}s}}
repeat: 1
warmup_runs: 0
"""


def one_run(args: argparse.Namespace, out: Path, watched: bool) -> int:
    """One run into `out`; the scrapes it answered. Both sides run the same plan; the watched
    one adds the live page (its server answers /metrics), with no linger after the run."""
    plan = PLAN.format(url=args.url, workload=args.workload, clients=args.clients,
                       duration=args.duration)  # fmt: skip
    counts, stop = [0], threading.Event()
    scraper = None
    if watched:
        port = free_port()
        plan += f'live: {{web: "127.0.0.1:{port}", linger: 0s}}\n'
        scraper = threading.Thread(target=_scrape_every_second, args=(port, stop, counts))
        scraper.start()
    out.parent.mkdir(parents=True, exist_ok=True)
    plan_file = out.with_suffix(".yaml")
    plan_file.write_text(plan)
    try:
        done = subprocess.run([*DBSCALE, "run", str(plan_file), "--out", str(out)],
                              capture_output=True, text=True, check=False,
                              timeout=args.duration * 4 + 120)  # fmt: skip
    finally:
        stop.set()
        if scraper is not None:
            scraper.join()
    if done.returncode != 0:
        sys.exit(f"error: dbscale run failed:\n{done.stderr}")
    return counts[0]


def _cpu_per_transaction(records: list[dict[str, Any]]) -> list[float]:
    return [float(r["client_cpu_us_per_txn"]) for r in records]


def gather(runs: list[Path], into: Path) -> list[dict[str, Any]]:
    """Every run's record in one results directory (the first's plan), for compare."""
    into.mkdir(parents=True)
    shutil.copy(runs[0] / "plan.json", into / "plan.json")
    lines = [(run / "runs.jsonl").read_text() for run in runs]
    (into / "runs.jsonl").write_text("".join(lines))
    return [json.loads(line) for text in lines for line in text.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--workload", default="tpcb")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="keep the results here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="live-overhead-")) if args.keep is None else args.keep
    runs: dict[bool, list[Path]] = {True: [], False: []}
    scrapes = 0
    for i in range(args.repeat):
        for watched in (True, False) if i % 2 == 0 else (False, True):
            out = work / "runs" / f"{i:02d}-{'on' if watched else 'off'}"
            scrapes += one_run(args, out, watched)
            runs[watched].append(out)
        print(f"pair {i + 1}/{args.repeat} done", file=sys.stderr)
    off = gather(runs[False], work / "unwatched")
    on = gather(runs[True], work / "watched")
    print(f"{args.workload}, {args.clients} clients, {args.duration} s runs, {args.repeat} per "
          f"side alternating; {scrapes} scrapes answered "
          f"({scrapes / args.repeat:.1f} a run)")  # fmt: skip
    compared = subprocess.run([*DBSCALE, "compare", str(work / "unwatched"), str(work / "watched")],
                              capture_output=True, text=True, check=False)  # fmt: skip
    print(compared.stdout + compared.stderr)
    cpu = compare_samples("client CPU us/txn", _cpu_per_transaction(off),
                          _cpu_per_transaction(on), higher_is_better=False)  # fmt: skip
    [change] = adjust_and_decide([cpu], noise_pct=NOISE_PCT)
    print(f"client CPU per transaction (window, µs): unwatched {change.median_a:.2f}, watched "
          f"{change.median_b:.2f}: {change.change_pct:+.1f}% [{change.ci_low_pct:+.1f}%, "
          f"{change.ci_high_pct:+.1f}%], {verdict_words(change)}; detectable at 80% power: "
          f"{change.detectable_pct:.1f}%")  # fmt: skip
    if args.keep is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
