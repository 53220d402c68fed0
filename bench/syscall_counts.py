"""Kernel work per transaction, counted with `perf stat` on syscall tracepoints: sends, receives,
waits and context switches. Unlike TPS and CPU time these counts hardly move with a noisy
machine, so they show where two clients differ when the timings cannot."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

EVENTS = {
    "sendto": "syscalls:sys_enter_sendto",
    "recvfrom": "syscalls:sys_enter_recvfrom",
    "epoll_wait": "syscalls:sys_enter_epoll_wait",
    "ppoll": "syscalls:sys_enter_ppoll",
    "poll": "syscalls:sys_enter_poll",
    "ctx switches": "context-switches",
}


def unavailable() -> str | None:
    """Why counting cannot work here, or None."""
    if not shutil.which("perf"):
        return "perf is not installed (apt-get install linux-perf)"
    probe = subprocess.run(
        ["perf", "stat", "-x,", "-e", EVENTS["sendto"], "--", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"perf cannot read syscall tracepoints: {probe.stderr.strip()[:200]}"
    return None


def counted(cmd: list[str], env: dict[str, str] | None = None) -> tuple[str, dict[str, int]]:
    """Runs cmd under `perf stat`; returns its output and the count of each event."""
    with tempfile.TemporaryDirectory(prefix="dbscale-perf-") as tmp:
        counts_file = Path(tmp) / "counts.csv"
        perf = ["perf", "stat", "-x,", "-o", str(counts_file), "-e", ",".join(EVENTS.values())]
        proc = subprocess.run([*perf, "--", *cmd], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"error: {' '.join(cmd[:3])} failed:\n{proc.stdout}\n{proc.stderr}")
        names = {event: name for name, event in EVENTS.items()}
        counts: dict[str, int] = {}
        for line in counts_file.read_text().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2] in names and fields[0].strip().isdigit():
                counts[names[fields[2]]] = int(fields[0])
    return proc.stdout + proc.stderr, counts


def print_table(rows: list[tuple[str, int, dict[str, int]]]) -> None:
    """One line per (label, transactions, counts): each event per transaction."""
    width = max([len(label) for label, _, _ in rows] + [28]) + 2
    header = "".join(f"{name:>13}" for name in EVENTS)
    print(f"\n{'per transaction (perf stat)':{width + 2}}{header}")
    for label, transactions, counts in rows:
        # An event perf could not count shows as "-", not as a zero.
        cells = "".join(f"{counts[name] / max(transactions, 1):13.2f}" if name in counts
                        else f"{'-':>13}" for name in EVENTS)  # fmt: skip
        print(f"  {label:{width}}{cells}")
