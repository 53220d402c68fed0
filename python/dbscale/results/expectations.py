"""Points whose throughput contradicts what a setting is known to do, by far: TLS, a connection
per transaction and TCP instead of a Unix socket each cost throughput, so a point with the costly
setting that beats its sibling (same other settings, the cheap one) by more than the noise can
explain is flagged as suspicious, with both points' CVs. Usually the setup is wrong (TLS not
really on, another load on the machine during one side's runs), not the physics.
"""

from __future__ import annotations

from collections.abc import Sequence

from dbscale.results.points import PointSummary
from dbscale.values import AxisValue, format_value

# axis -> (the cheap setting, the costly ones)
EXPECTED: dict[str, tuple[str, frozenset[str]]] = {
    "tls": ("disable", frozenset({"prefer", "require", "verify-ca", "verify-full"})),
    "connect": ("persistent", frozenset({"per-transaction"})),
    "transport": ("unix", frozenset({"tcp"})),
}
# "By far": more than this gain, and more than twice the larger of the two points' CVs.
MARGIN_PCT = 10.0


def _others(point: dict[str, AxisValue], axis: str) -> str:
    return repr(sorted((k, repr(v)) for k, v in point.items() if k != axis))


def flag_contradictions(points: Sequence[PointSummary]) -> list[PointSummary]:
    """`points` with a `suspicious: ...` flag on each point that contradicts its sibling."""
    out = list(points)
    for index, point in enumerate(out):
        for axis, (cheap, costly) in EXPECTED.items():
            value = point.point.get(axis)
            if value is None or format_value(value, axis) not in costly:
                continue
            sibling = next(
                (p for p in points if p.point.get(axis) is not None
                 and format_value(p.point[axis], axis) == cheap
                 and _others(p.point, axis) == _others(point.point, axis)),
                None,
            )  # fmt: skip
            flag = _contradiction(point, sibling, axis, cheap) if sibling else None
            if flag is not None:
                out[index] = out[index].model_copy(update={"flags": [*out[index].flags, flag]})
    return out


def _contradiction(point: PointSummary, sibling: PointSummary, axis: str, cheap: str) -> str | None:
    mine, theirs = point.throughput, sibling.throughput
    if not mine.median or not theirs.median:
        return None
    gain_pct = 100.0 * (mine.median / theirs.median - 1.0)
    noise_pct = 2.0 * max(mine.cv_pct or 0.0, theirs.cv_pct or 0.0)
    if gain_pct <= max(MARGIN_PCT, noise_pct):
        return None
    value = format_value(point.point[axis], axis)
    cvs = ", ".join(f"{c:.1f}%" if c is not None else "-" for c in (mine.cv_pct, theirs.cv_pct))
    return (
        f"suspicious: {axis}={value} is {gain_pct:.0f}% faster than {axis}={cheap}, which it "
        f"should cost (runs' CV {cvs}): check the setup"
    )
