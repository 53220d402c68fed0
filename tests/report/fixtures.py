"""Synthetic runs.jsonl records for report tests: the shape docs/results.md describes, with real
HDR V2 deflate histograms (encoded here, independently of the core that reads them), per-second
intervals, and optionally the vCPU, price and `observe` facts later work adds."""

from __future__ import annotations

import base64
import math
import random
import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dbscale.report.view import ResultsView, build_view
from dbscale.results.record import RunRecord

V2_COOKIE = 0x1C849313
V2_COMPRESSED_COOKIE = 0x1C849314
LOWEST_US, HIGHEST_US, DIGITS = 1, 3_600_000_000, 3
_HALF_MAGNITUDE = 10  # 3 digits: 2048 sub-buckets, half 1024


def _index(value_us: int) -> int:
    value = max(value_us, LOWEST_US)
    bucket = max(0, value.bit_length() - (_HALF_MAGNITUDE + 1))
    sub = value >> bucket
    return ((bucket + 1) << _HALF_MAGNITUDE) + (sub - (1 << _HALF_MAGNITUDE))


def _zigzag(value: int) -> bytes:
    encoded = (value << 1) ^ (value >> 63)
    out = bytearray()
    for _ in range(8):
        byte = encoded & 0x7F
        encoded >>= 7
        if not encoded:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)
    out.append(encoded & 0xFF)
    return bytes(out)


def encode_histogram(values_us: Mapping[int, int]) -> str:
    """Base64 HDR V2 deflate of a value (microseconds) -> count map, as the core writes it."""
    counts: dict[int, int] = {}
    for value, count in values_us.items():
        counts[_index(value)] = counts.get(_index(value), 0) + count
    payload = bytearray()
    previous = -1
    for index in sorted(counts):
        gap = index - previous - 1
        if gap > 1:
            payload += _zigzag(-gap)
        elif gap == 1:
            payload += _zigzag(0)
        payload += _zigzag(counts[index])
        previous = index
    header = struct.pack(">iiiiqqd", V2_COOKIE, len(payload), 0, DIGITS, LOWEST_US, HIGHEST_US, 1.0)
    inner = zlib.compress(header + bytes(payload))
    return base64.b64encode(struct.pack(">ii", V2_COMPRESSED_COOKIE, len(inner)) + inner).decode()


def latency_sample(median_ms: float, n: int, rng: random.Random) -> dict[int, int]:
    values: dict[int, int] = {}
    for _ in range(n):
        us = int(median_ms * 1000 * math.exp(rng.gauss(0, 0.5)))
        values[max(us, 1)] = values.get(max(us, 1), 0) + 1
    return values


def record(
    *,
    clients: int = 1,
    tps: float = 1000.0,
    latency_ms: float = 1.0,
    seconds: int = 5,
    target: str = "postgresql://bench@db1:5432/bench",
    protocol: str = "simple",
    workload: str = "tpcb",
    scale: int = 1,
    warmup: bool = False,
    cancelled: bool = False,
    status: str = "ok",
    seed: int = 1,
    extra: Mapping[str, Any] | None = None,
    samples: int = 400,
) -> dict[str, Any]:
    """One runs.jsonl line with consistent tps, latency, histogram and intervals."""
    rng = random.Random(seed)
    values = latency_sample(latency_ms, samples, rng)
    ordered = sorted(v for v, c in values.items() for _ in range(c))

    def pct(q: float) -> float:
        return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)] / 1000.0

    latency = {"count": len(ordered), "min": ordered[0] / 1000, "mean": latency_ms,
               "stddev": latency_ms / 3, "p50": pct(0.5), "p90": pct(0.9), "p95": pct(0.95),
               "p99": pct(0.99), "p999": pct(0.999), "max": ordered[-1] / 1000}  # fmt: skip
    intervals = [
        {"t_s": float(t), "transactions": int(tps), "tps": tps * (1 + rng.gauss(0, 0.02)),
         "errors": 0, "latency_ms": {"mean": latency_ms, "p50": pct(0.5), "p95": pct(0.95),
                                     "p99": pct(0.99), "max": latency["max"]}}
        for t in range(1, seconds + 1)
    ]  # fmt: skip
    line: dict[str, Any] = {
        "workload": workload, "clients": clients, "threads": min(clients, 2),
        "protocol": protocol, "connect": "persistent", "rate_tps": None, "seed": seed,
        "workload_params": {"scale": scale}, "duration_s": float(seconds),
        "transactions": int(tps * seconds), "tps": tps, "failed": 0, "retried": 0,
        "cancelled": cancelled, "errors": {"total": 0, "by_class": {}}, "latency_ms": latency,
        "server_version": "15.18", "tls": False, "target": target,
        "histogram": encode_histogram(values), "intervals": intervals,
        "verdict": {"status": status, "message": "boom" if status == "failed" else ""},
        "run_id": f"run-{seed}", "started_at": "2025-01-02T03:04:05.000Z",
        "ended_at": "2025-01-02T03:04:10.000Z", "warmup": warmup, "dbscale_version": "0.1.0",
        "config": {"target": {"url": target, "tls": None},
                   "workload": {"name": workload, "params": {"scale": scale}},
                   "protocol": protocol, "connect": "persistent", "clients": clients,
                   "threads": None, "duration_s": float(seconds), "rate_tps": None,
                   "max_tries": 1, "seed": seed, "interval_s": 1.0},
    }  # fmt: skip
    line.update(extra or {})
    return line


def sweep(
    clients: Sequence[int] = (1, 2, 4, 8),
    *,
    repeats: int = 1,
    targets: Sequence[str] = ("postgresql://bench@db1:5432/bench",),
    protocols: Sequence[str] = ("simple",),
    seconds: int = 5,
    extra_for: Any = None,
    samples: int = 400,
) -> list[dict[str, Any]]:
    """A study: every target x protocol x clients x repeat, TPS growing with clients."""
    records: list[dict[str, Any]] = []
    seed = 0
    for t_index, target in enumerate(targets):
        for p_index, protocol in enumerate(protocols):
            for c in clients:
                for r in range(repeats):
                    seed += 1
                    tps = 1000.0 * c**0.8 * (1 + 0.3 * t_index + 0.1 * p_index) * (1 + 0.03 * r)
                    extra = extra_for(target, protocol, c, r) if extra_for else None
                    records.append(
                        record(clients=c, tps=tps, latency_ms=c / (1 + 0.3 * t_index),
                               target=target, protocol=protocol, seed=seed, seconds=seconds,
                               extra=extra, samples=samples)
                    )  # fmt: skip
    return records


def view_of(records: Sequence[Mapping[str, Any]], path: Path, **options: Any) -> ResultsView:
    """The report's view of synthetic records, read as runs.jsonl lines are."""
    return build_view([RunRecord.from_json(dict(r)) for r in records], path, **options)
