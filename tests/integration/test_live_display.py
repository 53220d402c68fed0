"""The live display as a person sees it: `dbscale run` on a pseudo-terminal of 120 x 30, its
output fed into a terminal emulator (pyte), the screen read while a study runs and after it."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pyte

from tests.conftest import REPO
from tests.integration.conftest import read_runs

COLUMNS, ROWS = 120, 30


class Terminal:
    """A child process on a pty, with the screen it draws."""

    def __init__(self, argv: list[str]) -> None:
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
        env.update(TERM="xterm-256color", PYTHONPATH=str(REPO / "python"))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dbscale", *argv], stdin=slave, stdout=slave, stderr=slave,
            env=env, cwd=REPO, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.master = master
        self.transcript = b""

    def read_for(self, seconds: float) -> None:
        """Feeds the emulator whatever the child writes for `seconds` (or until it exits)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], min(left, 0.1))
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the child closed the pty
                return
            if not chunk:
                return
            self.transcript += chunk
            self.stream.feed(chunk)

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display if line.strip()]

    def close(self) -> int:
        self.read_for(60)
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


def test_live_display_shows_the_figures_then_one_line_per_run(
    tpcb_url: str, tmp_path: Path
) -> None:
    out = tmp_path / "live"
    term = Terminal(["run", "tpcb", "--target", tpcb_url, "-c", "2,3", "-T", "4s",
                     "--out", str(out)])  # fmt: skip
    seen: list[list[str]] = []
    for _ in range(12):  # sample the screen every half second during the first run
        term.read_for(0.5)
        seen.append(term.lines())
        if any(line.startswith("clients=2 #1:") for line in seen[-1]):
            break
    assert term.close() == 0, term.transcript.decode(errors="replace")[-2000:]
    figures = re.compile(
        r"^tps [\d,.]+ \(run [\d,.]+\)\s+lat p50 [\d.]+\s+p95 [\d.]+\s+p99 [\d.]+ ms\s+"
        r"errors 0\s+retries 0\s+clients 2/2$"
    )
    live = [screen for screen in seen if any(figures.match(line) for line in screen)]
    assert live, "the figures line never showed:\n" + "\n---\n".join("\n".join(s) for s in seen)
    screen = live[-1]
    assert any(re.match(r"^run 1/2 clients=2 #1 +━+─* \d/4 s, \d s left$", ln) for ln in screen)
    assert any(re.match(r"^study: 0 of 2 runs done, ETA \d+s$", line) for line in screen), screen
    final = term.lines()
    runs = [line for line in final if re.match(r"^clients=[23] #1: tps [\d,.]+, p95 ", line)]
    assert len(runs) == 2, final
    assert all(line.endswith(": ok") for line in runs), runs
    assert not any("number of transactions actually processed" in line for line in final)
    assert [r["clients"] for r in read_runs(out / "runs.jsonl")] == [2, 3]
