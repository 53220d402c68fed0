"""A soak: one long TPC-B run (an hour by default) against a private PostgreSQL, with dbscale's
resident memory, open files and threads sampled from /proc every minute. Memory should grow only
with what a run keeps per second (its interval snapshots and the observer's rows), so the script
fits a line through the RSS samples and sets it beside the bytes per second the run's record
holds; it fails (exit 1) when RSS grows faster than 4x that, or open files or threads grow at
all. Opt-in, never in `make test`:

    bash bench/soak.sh [--duration 60m] [--sample 60] [--clients 8]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from dbscale.values import parse_duration

REPO = Path(__file__).resolve().parents[1]
GROWTH_TOLERANCE = 4.0  # RSS may grow up to 4x the record's bytes per second (Python objects)


def sample(pid: int) -> tuple[float, int, int]:
    """(RSS MiB, open files, threads) of a live process."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss_kib = int(fields["VmRSS"].split()[0])
    threads = int(fields["Threads"])
    return rss_kib / 1024, sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir()), threads


def slope(points: list[tuple[float, float]]) -> float:
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    den = sum((t - mx) ** 2 for t, _ in points) or 1.0
    return sum((t - mx) * (v - my) for t, v in points) / den


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--duration", default="60m")
    parser.add_argument("--sample", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--out", default=str(REPO / ".cache" / "soak"))
    args = parser.parse_args()
    duration = parse_duration(args.duration)
    out = Path(args.out) / time.strftime("%Y%m%dT%H%M%S")
    argv = [sys.executable, "-m", "dbscale", "run", "tpcb", "--target", args.url,
            "-c", str(args.clients), "-T", f"{duration}s", "--out", str(out)]  # fmt: skip
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    began = time.monotonic()
    samples: list[tuple[float, float, int, int]] = []
    print(f"{'min':>6} {'RSS MiB':>8} {'files':>6} {'threads':>8}")
    while child.poll() is None:
        try:
            rss, files, threads = sample(child.pid)
        except (OSError, KeyError, ValueError):
            break
        t = time.monotonic() - began
        samples.append((t, rss, files, threads))
        print(f"{t / 60:>6.1f} {rss:>8.1f} {files:>6} {threads:>8}", flush=True)
        time.sleep(args.sample)
    if child.wait() != 0:
        print("dbscale run failed", file=sys.stderr)
        return 1
    [record] = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    per_second = (len(json.dumps(record["intervals"])) +
                  len(json.dumps(record.get("observe") or {}))) / record["duration_s"]  # fmt: skip
    steady = [s for s in samples if s[0] >= 30.0] or samples  # after start-up and connect
    growth = slope([(t, rss * 1024 * 1024) for t, rss, _, _ in steady])
    files = {f for _, _, f, _ in steady}
    threads = {n for _, _, _, n in steady}
    print(
        f"RSS grows {growth / 1024:.1f} KiB/s; the record holds {per_second / 1024:.1f} KiB per "
        f"second of run (intervals and observation)"
    )
    print(f"open files {min(files)}-{max(files)}, threads {min(threads)}-{max(threads)}")
    for hours, name in ((1, "an hour"), (24, "a day"), (168, "a week")):
        print(
            f"  {name}: {per_second * 3600 * hours / 2**20:,.0f} MiB of record, "
            f"{growth * 3600 * hours / 2**20:,.0f} MiB of RSS growth"
        )
    ok = growth <= GROWTH_TOLERANCE * per_second and len(files) <= 2 and len(threads) <= 2
    print("soak: ok" if ok else "soak: FAILED (memory, files or threads grew)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
