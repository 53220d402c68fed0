"""`dbscale micro disk --dir PATH`: fio with the Cloud Report's storage jobs, adapted from a raw
device to one file in PATH: 1 MiB sequential bandwidth, 4 KiB random IOPS, TPC-C's read, write
and mixed block-size splits, 4 KiB writes with an fsync every 512 KiB, and 4 KiB latency at low
depth, each job `--runtime` long over a `--size` file. Direct I/O where the filesystem allows it
(a note where it does not: then the page cache is in the figures). fio's JSON is read for IOPS,
bandwidth, completion-latency percentiles and the fsync latencies the report's own parser
dropped. PATH must be empty or dbscale's own; the test file is removed afterwards, on Ctrl-C too.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dbscale.errors import ConfigError, DbscaleError
from dbscale.micro.results import (
    Direction,
    DiskJob,
    DiskResult,
    FioDirection,
    FioReport,
    Fsync,
)

MARKER = ".dbscale-micro-disk"
DATA_FILE = "dbscale-fio.dat"
TPCC_READ = "8k/28:12k/23:4k/23:16k/7:20k/2:32k/17"
TPCC_WRITE = "4k/70:8k/20:12k/3:16k/1:20k/1:24k/1:28k/1:32k/1:36k/1:44k/1"
# The report's fio.cfg (cockroachlabs/cloud-report, scripts/gen/fio.cfg), depths unscaled.
JOBS: dict[str, dict[str, str | int]] = {  # fio job options by job name
    "wr-bw": {"rw": "write", "bs": "1M", "iodepth": 64, "numjobs": 8},
    "wr-iops": {"rw": "randwrite", "bs": "4k", "iodepth": 512},
    "wr-iops-tpcc": {"rw": "randwrite", "bssplit": TPCC_WRITE, "iodepth": 512},
    "wr-iops-tpcc-fsync": {"rw": "randwrite", "bs": "4k", "fsync": 128, "iodepth": 512,
                           "direct": 0},
    "wr-latency": {"rw": "randwrite", "bs": "4k", "iodepth": 16},
    "rd-bw": {"rw": "read", "bs": "1M", "iodepth": 64, "numjobs": 8},
    "rd-iops": {"rw": "randread", "bs": "4k", "iodepth": 512, "numjobs": 4},
    "rd-iops-tpcc": {"rw": "randread", "bssplit": TPCC_READ, "iodepth": 512, "numjobs": 4},
    "rd-latency": {"rw": "randread", "bs": "4k", "iodepth": 16},
    "rd-wr-iops-tpcc": {"rw": "randrw", "bssplit": f"{TPCC_READ},{TPCC_WRITE}", "iodepth": 512,
                        "numjobs": 4},
}  # fmt: skip
PERCENTILES = ("50.000000", "90.000000", "95.000000", "99.000000", "99.900000", "99.990000")


def prepare_dir(directory: Path) -> Path:
    """PATH made ready: created, or empty, or already dbscale's (its marker file)."""
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"--dir {directory} is not a directory", "name a directory for fio")
    directory.mkdir(parents=True, exist_ok=True)
    foreign = [p.name for p in directory.iterdir() if p.name not in (MARKER, DATA_FILE)]
    if foreign:
        shown = ", ".join(sorted(foreign)[:3]) + (" ..." if len(foreign) > 3 else "")
        raise ConfigError(
            f"--dir {directory} holds files dbscale did not create ({shown}): fio would write "
            "beside them",
            "give an empty directory (or one `dbscale micro disk` made) on the disk to measure",
        )
    (directory / MARKER).write_text("made by dbscale micro disk; its test file is removed\n")
    return directory / DATA_FILE


def direct_io_allowed(directory: Path) -> bool:
    """Whether files here can be opened with O_DIRECT (tmpfs and some others refuse it)."""
    probe = directory / (MARKER + ".probe")
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | getattr(os, "O_DIRECT", 0), 0o600)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return False
        raise
    else:
        os.close(fd)
        return True
    finally:
        probe.unlink(missing_ok=True)


def job_file(data: Path, jobs: Sequence[str], size_bytes: int, runtime_s: float,
             direct: bool) -> str:  # fmt: skip
    lines = ["[global]", "ioengine=libaio", f"direct={int(direct)}", "thread=1",
             "group_reporting=1", "randrepeat=0", "verify=0", "time_based=1",
             f"runtime={runtime_s:g}s", f"filename={data}",
             "random_generator=tausworthe64"]  # fmt: skip
    for name in jobs:
        spec = {**JOBS[name]}
        numjobs = int(spec.get("numjobs", 1))
        region = max(size_bytes // numjobs // 4096 * 4096, 4096)
        if not direct:
            spec["direct"] = 0
        lines += [f"[{name}]", "stonewall", f"size={region}"]
        if numjobs > 1:
            lines.append(f"offset_increment={region}")
        lines += [f"{key}={value}" for key, value in spec.items()]
    return "\n".join(lines) + "\n"


def _percentiles(values: Mapping[str, float]) -> dict[str, float]:
    """fio's percentile map in ns as {"50": us, "99.9": us, ...}."""
    return {
        p.rstrip("0").rstrip("."): round(float(values[p]) / 1e3, 2)
        for p in PERCENTILES
        if p in values
    }


def _direction(figures: FioDirection) -> Direction:
    return Direction(
        iops=round(figures.iops, 1),
        bandwidth_kib_s=float(figures.bw),
        latency_us_mean=round(figures.lat_ns.mean / 1e3, 2),
        latency_us=_percentiles(figures.clat_ns.percentile),
    )


def parse(report: FioReport) -> list[DiskJob]:
    """One entry per fio job: read and write figures, and fsync latencies when there were any."""
    out = []
    for job in report.jobs:
        entry = DiskJob(job=job.jobname, read=_direction(job.read), write=_direction(job.write))
        if job.sync.total_ios:
            fsync = Fsync(
                count=job.sync.total_ios,
                latency_us_mean=round(job.sync.lat_ns.mean / 1e3, 2),
                latency_us=_percentiles(job.sync.lat_ns.percentile),
            )
            entry = entry.model_copy(update={"fsync": fsync})
        out.append(entry)
    return out


def measure(directory: Path, *, jobs: Sequence[str], size_bytes: int, runtime_s: float,
            note: Callable[[str], None] = lambda _: None) -> DiskResult:  # fmt: skip
    """fio's jobs over a file in `directory`, as `dbscale micro disk --json` prints them."""
    unknown = [j for j in jobs if j not in JOBS]
    if unknown:
        raise ConfigError(f"--jobs: no job {', '.join(unknown)}", f"the jobs: {', '.join(JOBS)}")
    if not 1 << 20 <= size_bytes <= 1 << 40 or not 1 <= runtime_s <= 3600:
        raise ConfigError("--size from 1 MiB to 1 TiB, --runtime from 1 s to 1 h", None)
    fio = shutil.which("fio")
    if fio is None:
        raise DbscaleError("fio is not installed", "apt-get install fio (make system-deps)")
    data = prepare_dir(directory)
    direct = direct_io_allowed(directory)
    if not direct:
        note(f"{directory}: the filesystem refuses O_DIRECT; buffered I/O (page cache included)")
    job_path = directory / (MARKER + ".fio")
    job_path.write_text(job_file(data, jobs, size_bytes, runtime_s, direct))
    try:
        note(f"fio: {len(jobs)} job(s), {runtime_s:g} s each, over a {size_bytes >> 20} MiB file")
        done = subprocess.run([fio, "--output-format=json", str(job_path)], capture_output=True,
                              text=True, check=False)  # fmt: skip
        if done.returncode != 0:
            raise DbscaleError(f"fio failed: {done.stderr.strip()[-500:]}", "see fio's message")
        report = FioReport.model_validate_json(done.stdout[done.stdout.index("{") :])
    finally:
        data.unlink(missing_ok=True)
        job_path.unlink(missing_ok=True)
    return DiskResult(dir=str(directory), direct=direct, size_bytes=size_bytes,
                      runtime_s=runtime_s, fio_version=report.fio_version,
                      jobs=parse(report))  # fmt: skip
