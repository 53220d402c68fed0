"""`dbscale micro net`: request/response latency and multi-stream throughput between this machine
and one running `dbscale micro net --serve`, as the Cloud Report measured with netperf: one-byte
ping-pong on one TCP connection (transactions/s; min, mean, p50, p90, p99, max, stddev of the
latency), then streams added 1, 3, 5, ... until the standard deviation of the last three
aggregate throughputs falls under a threshold (0.35 Gbit/s) or the count passes 3 x vCPUs, the
count from three steps back kept, and a measured period with it (min/mean/max of the
half-second aggregate and its series).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from dbscale import core
from dbscale.errors import ConfigError
from dbscale.micro.results import NetResult, SearchStep

DEFAULT_PORT = 12865  # netserver's port in the report's intra-AZ runs
THRESHOLD_GBPS = 0.35
MAX_STREAMS = 1024


def serve(
    bind: str, port: int, note: Callable[[str], None], stop_after_s: float | None = None
) -> None:
    """Serves until Ctrl-C (or SIGTERM), or for `stop_after_s` seconds."""
    server = core.NetServer(bind, port)
    until = f"for {stop_after_s:g} s or " if stop_after_s is not None else ""
    note(f"micro net server listening on {server.addr} {until}until Ctrl-C")
    deadline = time.monotonic() + stop_after_s if stop_after_s is not None else None
    try:
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.5)
    except KeyboardInterrupt:
        note("stopping the micro net server")
    finally:
        server.stop()


def address(host: str, port: int) -> str:
    """`HOST` or `HOST:PORT` (IPv6 in brackets) as host:port."""
    if host.startswith("[") or host.count(":") == 1:
        return host if host.rsplit(":", 1)[-1].isdigit() else f"{host}:{port}"
    if ":" in host:  # a bare IPv6 address
        return f"[{host}]:{port}"
    return f"{host}:{port}"


def measure(
    addr: str,
    *,
    seconds: float,
    streams: int | None,
    step_s: float,
    buffer_bytes: int,
    note: Callable[[str], None] = lambda _: None,
) -> NetResult:
    """Request/response, then the stream search (unless `streams` is given), then the streams."""
    if not 0.1 <= seconds <= 3600 or not 0.5 <= step_s <= 3600:
        raise ConfigError(
            f"--seconds {seconds:g} / --step {step_s:g}: from 0.1 (0.5 for a step) to 3600 s",
            "the report ran 60 s of request/response and 180 s per search step",
        )
    if streams is not None and not 1 <= streams <= MAX_STREAMS:
        raise ConfigError(f"--streams: must be from 1 to {MAX_STREAMS}, got {streams}", None)
    note(f"request/response on one connection to {addr}, {seconds:g} s")
    rr = core.micro_net_rr(addr, seconds)
    history: list[tuple[int, float]] = []
    cap = 3 * len(os.sched_getaffinity(0))
    chosen = streams
    while chosen is None:
        count = 1 if not history else history[-1][0] + 2
        step = core.micro_net_streams(addr, count, step_s, buffer_bytes)
        mean = step.mean_gbps
        history.append((count, mean))
        note(f"search: {count} stream(s), {mean:.2f} Gbit/s")
        chosen = core.pick_stream_count(history, THRESHOLD_GBPS, cap)
    note(f"throughput with {chosen} stream(s), {seconds:g} s")
    measured = core.micro_net_streams(addr, chosen, seconds, buffer_bytes)
    rule = (
        f"stddev of the last 3 steps < {THRESHOLD_GBPS} Gbit/s or over {cap} streams; the "
        "count 3 steps back"
    )
    search = [SearchStep(streams=c, mean_gbps=g) for c, g in history]
    return NetResult.of(addr, rr, search, rule, measured)
