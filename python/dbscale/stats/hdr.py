"""HDR histograms as the native core stores them: base64 of the V2 *compressed* encoding (a
cookie, a length, then zlib of the V2 encoding: a 40-byte header and the bucket counts as ZigZag
LEB128 varints, a negative number standing for that many empty buckets). Decoded into a sparse
index -> count map that merges exactly; percentiles, mean and max follow the Rust `hdrhistogram`
crate's definitions so they match what a run reports.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from dbscale.errors import ResultsError

V2_COOKIE_BASE = 0x1C849303
V2_COMPRESSED_COOKIE_BASE = 0x1C849304
_COOKIE_WORD_SIZE_BITS = 0xF0  # the word size is folded into the cookie; ignored when reading
_V2_HEADER = struct.Struct(">iiiiqqd")  # cookie, payload length, offset, digits, low, high, ratio
_COMPRESSED_HEADER = struct.Struct(">ii")


@dataclass(frozen=True)
class HdrLayout:
    """Bucket arithmetic of one histogram configuration (as in the `hdrhistogram` crate)."""

    lowest: int
    highest: int
    significant_digits: int

    @cached_property
    def unit_magnitude(self) -> int:
        return self.lowest.bit_length() - 1

    @cached_property
    def sub_bucket_count_magnitude(self) -> int:
        largest_single_unit: int = 2 * 10**self.significant_digits
        return (largest_single_unit - 1).bit_length()

    @cached_property
    def sub_bucket_half_count_magnitude(self) -> int:
        return self.sub_bucket_count_magnitude - 1

    @cached_property
    def sub_bucket_half_count(self) -> int:
        return 1 << self.sub_bucket_half_count_magnitude

    def bucket_for(self, value: int) -> int:
        mask = ((1 << self.sub_bucket_count_magnitude) - 1) << self.unit_magnitude
        leading_zero_base = 64 - self.unit_magnitude - self.sub_bucket_count_magnitude
        leading_zeros = 64 - int(value | mask).bit_length()
        return leading_zero_base - leading_zeros

    def value_for(self, index: int) -> int:
        """The lowest value counted at `index`."""
        bucket = (index >> self.sub_bucket_half_count_magnitude) - 1
        sub_bucket = (index & (self.sub_bucket_half_count - 1)) + self.sub_bucket_half_count
        if bucket < 0:
            sub_bucket -= self.sub_bucket_half_count
            bucket = 0
        return sub_bucket << (bucket + self.unit_magnitude)

    def equivalent_range(self, value: int) -> int:
        return 1 << (self.unit_magnitude + self.bucket_for(value))

    def lowest_equivalent(self, value: int) -> int:
        shift = self.bucket_for(value) + self.unit_magnitude
        return (value >> shift) << shift

    def highest_equivalent(self, value: int) -> int:
        return self.lowest_equivalent(value) + self.equivalent_range(value) - 1

    def median_equivalent(self, value: int) -> int:
        return self.lowest_equivalent(value) + (self.equivalent_range(value) >> 1)


@dataclass
class HdrHistogram:
    """Counts per bucket index (sparse). Values are in the units recorded (microseconds)."""

    layout: HdrLayout
    counts: dict[int, int] = field(default_factory=dict)

    @property
    def total_count(self) -> int:
        return sum(self.counts.values())

    @classmethod
    def from_base64(cls, text: str) -> HdrHistogram:
        """Decodes the native core's `histogram` field; `ResultsError` if it is not one."""
        try:
            raw = base64.b64decode(text.strip(), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ResultsError(f"a stored histogram is not base64: {exc}") from None
        return cls.from_bytes(raw)

    @classmethod
    def from_bytes(cls, raw: bytes) -> HdrHistogram:
        if len(raw) < _COMPRESSED_HEADER.size:
            raise ResultsError("a stored histogram is truncated")
        cookie, length = _COMPRESSED_HEADER.unpack_from(raw)
        if cookie & ~_COOKIE_WORD_SIZE_BITS == V2_COMPRESSED_COOKIE_BASE:
            try:
                inner = zlib.decompress(
                    raw[_COMPRESSED_HEADER.size : _COMPRESSED_HEADER.size + length]
                )
            except zlib.error as exc:
                raise ResultsError(f"a stored histogram does not inflate: {exc}") from None
            return cls._from_v2(inner)
        return cls._from_v2(raw)

    @classmethod
    def _from_v2(cls, raw: bytes) -> HdrHistogram:
        if len(raw) < _V2_HEADER.size:
            raise ResultsError("a stored histogram's header is truncated")
        cookie, payload_len, offset, digits, low, high, _ratio = _V2_HEADER.unpack_from(raw)
        if cookie & ~_COOKIE_WORD_SIZE_BITS != V2_COOKIE_BASE:
            raise ResultsError(f"a stored histogram has an unknown cookie {cookie:#x}")
        if offset != 0:
            raise ResultsError("normalizing index offsets are not supported")
        payload = raw[_V2_HEADER.size : _V2_HEADER.size + payload_len]
        histogram = cls(HdrLayout(lowest=low, highest=high, significant_digits=digits))
        index = 0
        for number in _zigzag_varints(payload):
            if number < 0:
                index += -number
            else:
                if number:
                    histogram.counts[index] = number
                index += 1
        return histogram

    def add(self, other: HdrHistogram) -> None:
        """Adds `other`'s counts (exact merge); both must share bounds and precision."""
        if other.layout != self.layout:
            raise ResultsError(
                f"histograms with different bounds cannot be merged ({self.layout} vs "
                f"{other.layout})"
            )
        for index, count in other.counts.items():
            self.counts[index] = self.counts.get(index, 0) + count

    def buckets(self) -> list[tuple[int, int]]:
        """(bucket index, count) in ascending order of value."""
        return sorted(self.counts.items())

    def value_at_quantile(self, quantile: float) -> int:
        """Like the crate: the highest value equivalent to the bucket that reaches the rank."""
        return self.values_at_quantiles([quantile])[0]

    def values_at_quantiles(self, quantiles: list[float]) -> list[int]:
        """`value_at_quantile` for each of `quantiles`, in one walk of the buckets."""
        buckets = self.buckets()
        total = sum(count for _, count in buckets)
        values = [0] * len(quantiles)
        position, running = 0, 0
        for slot in sorted(range(len(quantiles)), key=quantiles.__getitem__):
            quantile = min(quantiles[slot], 1.0)
            rank = max(int(_ceil(quantile * total)), 1)
            while position < len(buckets) and running < rank:
                running += buckets[position][1]
                position += 1
            if running < rank:
                continue  # an empty histogram
            value = self.layout.value_for(buckets[position - 1][0])
            if quantile == 0.0:
                values[slot] = self.layout.lowest_equivalent(value)
            else:
                values[slot] = self.layout.highest_equivalent(value)
        return values

    def max(self) -> int:
        if not self.counts:
            return 0
        return self.layout.highest_equivalent(self.layout.value_for(max(self.counts)))

    def min(self) -> int:
        if not self.counts:
            return 0
        return self.layout.lowest_equivalent(self.layout.value_for(min(self.counts)))

    def mean(self) -> float:
        return self.mean_and_stdev()[0]

    def stdev(self) -> float:
        return self.mean_and_stdev()[1]

    def mean_and_stdev(self) -> tuple[float, float]:
        """Both from each bucket's median-equivalent value, as the crate computes them."""
        buckets = self.buckets()
        total = sum(count for _, count in buckets)
        if not total:
            return 0.0, 0.0
        layout = self.layout
        middles = [layout.median_equivalent(layout.value_for(index)) for index, _ in buckets]
        mean = 0.0
        for middle, (_, count) in zip(middles, buckets, strict=True):
            mean += middle * count / total
        acc = 0.0
        for middle, (_, count) in zip(middles, buckets, strict=True):
            dev = middle - mean
            acc += dev * dev * count
        return mean, float((acc / total) ** 0.5)


def _ceil(x: float) -> int:
    whole = int(x)
    return whole + 1 if x > whole else whole


def _zigzag_varints(data: bytes) -> Iterable[int]:
    """HdrHistogram's LEB128: up to 8 bytes of 7 bits, a 9th byte of 8 bits; then ZigZag."""
    pos, end = 0, len(data)
    while pos < end:
        value = 0
        for shift in range(0, 56, 7):
            if pos >= end:
                raise ResultsError("a stored histogram's counts are truncated")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
        else:
            if pos >= end:
                raise ResultsError("a stored histogram's counts are truncated")
            value |= data[pos] << 56
            pos += 1
        yield (value >> 1) ^ -(value & 1)


def merge(blobs: Iterable[str]) -> HdrHistogram | None:
    """One histogram from several base64 blobs, or None when there are none."""
    merged: HdrHistogram | None = None
    for blob in blobs:
        histogram = HdrHistogram.from_base64(blob)
        if merged is None:
            merged = histogram
        else:
            merged.add(histogram)
    return merged


# The percentiles every summary reports, with the names runs use (`latency_ms.p95`, ...).
PERCENTILES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99, "p999": 0.999}


def latency_summary_ms(histogram: HdrHistogram | None) -> dict[str, float | int | None]:
    """count, min, mean, stddev, p50 ... p999, max in milliseconds (microsecond histograms)."""
    if histogram is None or not histogram.counts:
        return {"count": 0, **dict.fromkeys(["min", "mean", "stddev", *PERCENTILES, "max"])}
    mean, stdev = histogram.mean_and_stdev()
    summary: dict[str, float | int | None] = {
        "count": histogram.total_count,
        "min": histogram.min() / 1000.0,
        "mean": mean / 1000.0,
        "stddev": stdev / 1000.0,
    }
    values = histogram.values_at_quantiles(list(PERCENTILES.values()))
    for name, value in zip(PERCENTILES, values, strict=True):
        summary[name] = value / 1000.0
    summary["max"] = histogram.max() / 1000.0
    return summary
