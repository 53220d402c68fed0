"""Synthetic results for tests that need no server: HDR V2 deflate blobs written independently of
the decoder (a test oracle), and runs.jsonl records in the shape docs/results.md describes."""

from __future__ import annotations

import base64
import json
import random
import struct
import uuid
import zlib
from pathlib import Path
from typing import Any

from dbscale.results.record import RunRecord


def encode_histogram(values_us: list[int]) -> str:
    """A V2 deflate blob, written independently of the decoder (a test oracle)."""
    counts: dict[int, int] = {}
    for value in values_us:
        index = hdr_index(value)
        counts[index] = counts.get(index, 0) + 1
    payload = bytearray()
    zeros = 0
    for index in range(max(counts) + 1):
        count = counts.get(index, 0)
        if count == 0:
            zeros += 1
            continue
        if zeros:
            payload += _varint(-zeros)
            zeros = 0
        payload += _varint(count)
    header = struct.pack(">iiiiqqd", 0x1C849313, len(payload), 0, 3, 1, 3_600_000_000, 1.0)
    inner = zlib.compress(header + bytes(payload))
    return base64.b64encode(struct.pack(">ii", 0x1C849314, len(inner)) + inner).decode()


def hdr_index(value: int) -> int:
    bucket = max(0, value.bit_length() - 11)
    return ((bucket + 1) << 10) + ((value >> bucket) - 1024)


def _varint(number: int) -> bytes:
    value = (number << 1) ^ (number >> 63)
    value &= (1 << 64) - 1
    out = bytearray()
    for _ in range(8):
        if value < 0x80:
            out.append(value)
            return bytes(out)
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value & 0xFF)
    return bytes(out)


def make_record(
    point: dict[str, Any],
    tps: float,
    *,
    rng: random.Random,
    warmup: bool = False,
    repetition: int = 0,
    latency_scale_us: float = 1000.0,
    seconds: int = 30,
) -> dict[str, Any]:
    """One measured run: latencies around `latency_scale_us`, per-second TPS around `tps`."""
    key = ",".join(f"{k}={v}" for k, v in point.items()) or "default"
    latencies = [max(1, int(rng.expovariate(1 / latency_scale_us))) for _ in range(2000)]
    histogram = encode_histogram(latencies)
    ordered = sorted(latencies)
    return {
        "run_id": uuid.uuid4().hex,
        "run_key": f"{key}#{'warmup' if warmup else ''}{repetition}",
        "point_key": key,
        "point": point,
        "repetition": repetition,
        "warmup": warmup,
        "warmup_kind": "point" if warmup else None,
        "cancelled": False,
        "workload": "tpcb",
        "clients": 4,
        "tps": tps,
        "transactions": int(tps * seconds),
        "latency_ms": {
            "p50": ordered[1000] / 1000, "p95": ordered[1900] / 1000, "p99": ordered[1980] / 1000,
        },
        "histogram": histogram,
        "transaction_types": {"tpcb-like": {"histogram": histogram}},
        "intervals": [{"t_s": float(i + 1), "tps": tps + rng.gauss(0, tps * 0.01)}
                      for i in range(seconds)],
        "verdict": {"status": "ok", "message": ""},
    }  # fmt: skip


def write_results(directory: Path, records: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "runs.jsonl").open("w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    return directory


def study_records(
    means: dict[str, float], *, runs: int, cv: float, seed: int, axis: str = "tls"
) -> list[dict[str, Any]]:
    """`runs` measured runs per point (`axis`=name), TPS normal around each mean."""
    rng = random.Random(seed)
    records = []
    for rep in range(runs):
        for value, mean in means.items():
            tps = rng.gauss(mean, mean * cv)
            scale = 1000.0 * 1000.0 / mean
            records.append(
                make_record({axis: value}, tps, rng=rng, repetition=rep, latency_scale_us=scale)
            )
    return records


def typed(records: list[dict[str, Any]]) -> list[RunRecord]:
    """Synthetic lines read as runs.jsonl lines are."""
    return [RunRecord.from_json(r) for r in records]
