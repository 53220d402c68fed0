"""`dbscale micro disk` against fio run directly on the same job, alternating (the order swapped
each round) so drift hits both alike: each round runs `dbscale micro disk --jobs JOB --json` and
then `fio` with the job's options on its command line (written here from the job's settings, not
through dbscale's job file), on a file of the same size in the same directory, and reads IOPS
and p99 latency from each. Prints the medians and the ratio with a 95% interval per job.

    bash bench/vs_fio.sh [--rounds 5] [--jobs rd-latency,wr-iops-tpcc-fsync] [--runtime 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from significance import significance  # bench/significance.py, beside this script

from dbscale.micro.disk import JOBS, direct_io_allowed

REPO = Path(__file__).resolve().parents[1]
DBSCALE = [sys.executable, "-m", "dbscale"]


def dbscale_figures(directory: Path, job: str, size_mib: int, runtime_s: float) -> dict[str, float]:
    done = subprocess.run(
        [*DBSCALE, "micro", "disk", "--dir", str(directory), "--jobs", job,
         "--size", str(size_mib), "--runtime", f"{runtime_s:g}s", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    entry = json.loads(done.stdout)["jobs"][0]
    side = "read" if entry["read"]["iops"] > entry["write"]["iops"] else "write"
    return {"iops": entry[side]["iops"], "p99_us": entry[side]["latency_us"].get("99", 0.0)}


def fio_figures(directory: Path, job: str, size_mib: int, runtime_s: float) -> dict[str, float]:
    """fio by hand: the job's options as flags, one file, JSON out."""
    options = dict(JOBS[job])
    numjobs = int(options.get("numjobs", 1))
    region = (size_mib << 20) // numjobs // 4096 * 4096
    direct = int(options.pop("direct", 1)) if direct_io_allowed(directory) else 0
    flags = [f"--{key}={value}" for key, value in options.items()]
    if numjobs > 1:
        flags.append(f"--offset_increment={region}")
    target = directory / "fio-by-hand.dat"
    try:
        done = subprocess.run(
            ["fio", f"--name={job}", f"--filename={target}", "--ioengine=libaio",
             f"--direct={direct}", "--thread", "--group_reporting", "--randrepeat=0",
             "--time_based", f"--runtime={runtime_s:g}s", f"--size={region}",
             "--random_generator=tausworthe64", *flags, "--output-format=json"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    finally:
        target.unlink(missing_ok=True)
    entry = json.loads(done.stdout[done.stdout.index("{") :])["jobs"][0]
    side = "read" if entry["read"]["iops"] > entry["write"]["iops"] else "write"
    p99 = entry[side]["clat_ns"].get("percentile", {}).get("99.000000", 0.0) / 1e3
    return {"iops": entry[side]["iops"], "p99_us": p99}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", default="rd-latency,wr-latency,wr-iops-tpcc-fsync")
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--runtime", type=float, default=5.0)
    parser.add_argument("--dir", type=Path, default=None, help="default: a directory in /var/tmp")
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="dbscale-vs-fio-", dir="/var/tmp"))
    ours_dir, theirs_dir = base / "dbscale", base / "fio"
    theirs_dir.mkdir(parents=True, exist_ok=True)
    print(f"directory {base} (direct I/O: {direct_io_allowed(theirs_dir)}), "
          f"{args.size_mib} MiB file, {args.runtime:g} s per job", flush=True)  # fmt: skip
    try:
        lines = compare(args, ours_dir, theirs_dir)
    finally:
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
    print(f"\n{args.rounds} rounds, medians (change = dbscale vs fio run directly)")
    print("\n".join(lines))
    return 0


def compare(args: argparse.Namespace, ours_dir: Path, theirs_dir: Path) -> list[str]:
    lines = []
    for job in args.jobs.split(","):
        ours: list[dict[str, float]] = []
        theirs: list[dict[str, float]] = []
        for round_ in range(args.rounds):
            order = ("dbscale", "fio") if round_ % 2 == 0 else ("fio", "dbscale")
            for tool in order:
                if tool == "dbscale":
                    ours.append(dbscale_figures(ours_dir, job, args.size_mib, args.runtime))
                else:
                    theirs.append(fio_figures(theirs_dir, job, args.size_mib, args.runtime))
                got = (ours if tool == "dbscale" else theirs)[-1]
                print(f"{job} round {round_ + 1} {tool:>7}: {got['iops']:,.0f} IOPS, "
                      f"p99 {got['p99_us']:,.1f} us", flush=True)  # fmt: skip
        for figure, unit in (("iops", "IOPS"), ("p99_us", "us p99")):
            a = [t[figure] for t in theirs]
            b = [o[figure] for o in ours]
            ratio = statistics.median(b) / statistics.median(a) if statistics.median(a) else 0
            lines.append(f"  {job:<20} {unit:<7} dbscale {statistics.median(b):>11,.1f}  fio "
                         f"{statistics.median(a):>11,.1f}  ratio {ratio:.2f}x  "
                         f"{significance(a, b)}")  # fmt: skip
    return lines


if __name__ == "__main__":
    sys.exit(main())
