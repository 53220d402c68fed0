"""Live progress of a run, fed with the per-second intervals the runner polls. On a terminal a
rich Live panel (elapsed/remaining, TPS, QPS, p50/p95/p99, errors); elsewhere, or when an
output format is asked for, one plain line per interval: pgbench's `--progress` shape on stderr,
or sysbench's `--report-interval` shape on stdout (each where its tool prints it; see
output_format.py). Other messages go to stderr.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.console import Console
from rich.live import Live
from rich.text import Text

from dbscale.core.result import Interval, IntervalLatency
from dbscale.modes import WorkloadFamily
from dbscale.run.output_format import OutputFormat, shape_for
from dbscale.run.sysbench_format import interval_line
from dbscale.values import format_eta


@dataclass(frozen=True)
class RunSlot:
    """The run about to start, and where it sits in the study. `eta_s`: the study's remaining
    wall time."""

    label: str
    index: int
    total: int
    duration_s: float
    eta_s: float | None = None
    workload: str = ""
    family: WorkloadFamily | None = None
    clients: int = 0
    transactions: int | None = None  # per client: a counted run, `duration_s` only its limit

    @property
    def length(self) -> str:
        if self.transactions is not None:
            return f"{self.transactions} transactions per client"
        return f"{self.duration_s:g} s"


class RunProgress(Protocol):
    """What the runner tells the display. `eta_s`: the study's remaining wall time."""

    console: Console

    def begin(self, slot: RunSlot) -> None: ...
    def update(self, intervals: Sequence[Interval]) -> None: ...
    def note(self, message: str) -> None: ...
    def end(self) -> None: ...


def make_progress(
    console: Console | None = None,
    *,
    out: Console | None = None,
    output_format: OutputFormat = OutputFormat.AUTO,
) -> RunProgress:
    """Live panel on a terminal unless a format is asked for, plain lines otherwise."""
    console = console or Console(stderr=True)
    terminal = console.is_terminal and not console.is_dumb_terminal
    if terminal and output_format in (OutputFormat.AUTO, OutputFormat.LINES):
        return LiveProgress(console)
    return PlainProgress(console, out=out, output_format=output_format)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _ms3(value: float | None) -> str:
    """Milliseconds to about three significant digits (0.054, 1.23, 12.3, 123)."""
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 1 else f"{value:.2f}" if value < 10 else f"{value:.1f}"


def progress_line(interval: Interval) -> str:
    """pgbench's progress line: `progress: 5.0 s, 1234.5 tps, lat 6.4 ms stddev 1.2, 0 failed`."""
    lat = interval.latency_ms or IntervalLatency()
    line = (
        f"progress: {interval.t_s:.1f} s, {interval.tps:.1f} tps, "
        f"lat {_ms(lat.mean)} ms stddev {_ms(lat.stddev)}, {interval.errors} failed"
    )
    if interval.lag_ms is not None:
        line += f", lag {interval.lag_ms:.1f} ms"
    return line


class PlainProgress:
    """One line per interval, for logs and pipes: pgbench's shape on `console` (stderr), or
    sysbench's on `out` (stdout)."""

    def __init__(
        self,
        console: Console,
        *,
        out: Console | None = None,
        output_format: OutputFormat = OutputFormat.AUTO,
    ) -> None:
        self.console = console
        self.out = out or console
        self.output_format = output_format
        self._shape = shape_for(output_format, None)
        self._clients = 0

    def begin(self, slot: RunSlot) -> None:
        self._shape = shape_for(self.output_format, slot.family)
        self._clients = slot.clients
        eta = (
            f", study ETA {format_eta(slot.eta_s)}"
            if slot.eta_s is not None and slot.total > 1
            else ""
        )
        self.console.print(
            f"run {slot.index}/{slot.total}: {slot.label}, {slot.length}{eta}",
            highlight=False,
            soft_wrap=True,  # a log line is not cut to the 80 columns of a pipe
        )

    def update(self, intervals: Sequence[Interval]) -> None:
        for interval in intervals:
            if interval.drain:  # after the window: pgbench and sysbench print no line for it
                continue
            if self._shape is OutputFormat.SYSBENCH:
                line = interval_line(interval, self._clients)
                self.out.print(line, highlight=False, markup=False, soft_wrap=True)
            else:
                self.console.print(progress_line(interval), highlight=False, soft_wrap=True)

    def note(self, message: str) -> None:
        self.console.print(message, highlight=False, soft_wrap=True)

    def end(self) -> None:
        pass


class LiveProgress:
    """A few refreshing lines while a run goes on: where the run and the study are, and the last
    second's throughput, latency, errors, retries and connected clients. Plain text lines (no
    rich progress bar, which ends without a newline and hid the line after it)."""

    BAR_WIDTH = 24

    def __init__(self, console: Console) -> None:
        self.console = console
        self._live: Live | None = None
        self._slot = RunSlot(label="", index=0, total=0, duration_s=0.0)
        self._started = 0.0
        self._last = Interval()
        self._seen_s = 0.0
        self._transactions = self._errors = self._retries = 0
        self._notes: list[str] = []

    def begin(self, slot: RunSlot) -> None:
        self._slot = slot
        self._started = time.monotonic()
        self._last, self._seen_s, self._notes = Interval(), 0.0, []
        self._transactions = self._errors = self._retries = 0
        self._live = Live(
            self._render(), console=self.console, refresh_per_second=4, transient=True,
            get_renderable=self._render,
        )  # fmt: skip
        self._live.start()

    def update(self, intervals: Sequence[Interval]) -> None:
        for interval in intervals:
            if interval.drain:
                continue
            self._last = interval
            self._seen_s = interval.t_s
            self._transactions += interval.transactions
            self._errors += interval.errors
            self._retries += interval.retries

    def note(self, message: str) -> None:
        self._notes.append(message)
        if self._live is None:
            self.console.print(message, highlight=False)

    def end(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _render(self) -> Text:
        return Text("\n").join(self.lines())

    def lines(self) -> list[Text]:
        """The display's lines, as a person sees them."""
        slot = self._slot
        elapsed = time.monotonic() - self._started if self._started else 0.0
        shown = min(elapsed, slot.duration_s)
        remaining = max(slot.duration_s - elapsed, 0.0)
        done = shown / slot.duration_s if slot.duration_s > 0 else 1.0
        filled = round(done * self.BAR_WIDTH)
        head = Text.assemble(
            (f"run {slot.index}/{slot.total} ", "bold"),
            f"{slot.label}  ",
            ("━" * filled, "green"),
            ("─" * (self.BAR_WIDTH - filled), "grey50"),
            f" {shown:.0f}/{slot.duration_s:g} s, {remaining:.0f} s left",
        )
        if slot.transactions is not None:  # a counted run: how long is not known
            head = Text.assemble(
                (f"run {slot.index}/{slot.total} ", "bold"),
                f"{slot.label}  {slot.length}, {elapsed:.0f} s so far",
            )
        lines = [head, self._figures()]
        if slot.eta_s is not None and slot.total > 1:
            left = max(slot.eta_s - shown, 0.0)
            lines.append(Text(f"study: {slot.index - 1} of {slot.total} runs done, "
                              f"ETA {format_eta(left)}"))  # fmt: skip
        lines += [Text(n, style="yellow") for n in self._notes[-2:]]
        return lines

    def _figures(self) -> Text:
        last = self._last
        if self._seen_s <= 0:
            return Text("waiting for the first second's figures ...", style="grey50")
        lat = last.latency_ms or IntervalLatency()
        run_tps = self._transactions / self._seen_s
        clients = last.clients_connected
        connected = (
            f"   clients {clients}/{self._slot.clients}"
            if clients is not None and self._slot.clients
            else ""
        )
        warn = "red" if clients is not None and clients < self._slot.clients else ""
        text = Text.assemble(
            ("tps ", "bold"), f"{last.tps:,.1f} (run {run_tps:,.1f})   ",
            ("lat ", "bold"),
            f"p50 {_ms3(lat.p50)}  p95 {_ms3(lat.p95)}  p99 {_ms3(lat.p99)} ms   ",
            ("errors ", "bold"), (f"{self._errors}", "red" if self._errors else ""),
            ("  retries ", "bold"), f"{self._retries}",
            (connected, warn),
        )  # fmt: skip
        if last.lag_ms is not None:
            text.append(f"   lag {last.lag_ms:.1f} ms")
        return text
