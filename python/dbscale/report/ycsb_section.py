"""YCSB's section of the report: each point's operation mix as configured and as run, and each
operation's latency from the merged histograms of the point's runs (YCSB prints the same per
operation: `[READ]`, `[UPDATE]`, ...). A measured share far from its configured one, beyond
sampling error, is marked: it means the key chooser or the mix did not do what was asked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from dbscale import core
from dbscale.modes import WorkloadFamily
from dbscale.report.markup import Markup, element, join
from dbscale.report.tables import Cell, table_block
from dbscale.report.view import PointView, ResultsView

# The core's transaction types of the family, with the property that sets each one's share.
OPERATIONS = (
    ("read", "readproportion"),
    ("update", "updateproportion"),
    ("insert", "insertproportion"),
    ("scan", "scanproportion"),
    ("read_modify_write", "readmodifywriteproportion"),
)
# Standard errors of the binomial share beyond which a measured share is marked.
MARK_SE = 4.5


def _is_ycsb(workload: str) -> bool:
    return core.family_of(workload) is WorkloadFamily.YCSB


def _configured(params: Mapping[str, object]) -> dict[str, float]:
    shares = {}
    for name, key in OPERATIONS:
        try:
            shares[name] = max(float(str(params.get(key, 0.0))), 0.0)
        except ValueError:
            shares[name] = 0.0
    total = sum(shares.values())
    return {name: (share / total if total > 0 else 0.0) for name, share in shares.items()}


def mix_rows(point: PointView) -> list[list[Cell]]:
    """One row per operation the point ran or was configured to run."""
    configured = _configured(point.runs[0].record.workload_params)
    figures = point.summary.transaction_types
    total = sum(figures[name].count for name, _ in OPERATIONS if name in figures)
    rows: list[list[Cell]] = []
    for name, _ in OPERATIONS:
        wanted = configured[name]
        got = figures.get(name)
        count = got.count if got is not None else 0
        if wanted == 0 and count == 0:
            continue
        share = count / total if total else 0.0
        se = math.sqrt(wanted * (1 - wanted) / total) if total else 0.0
        off = abs(share - wanted) > MARK_SE * se + 1e-12
        rows.append([
            point.label, name, round(100 * wanted, 2), round(100 * share, 2),
            "yes" if off else "no", count,
            got.p50 if got else None, got.p95 if got else None, got.p99 if got else None,
            got.max if got else None,
        ])  # fmt: skip
    return rows


def _ycsb_points(study: ResultsView) -> list[PointView]:
    return [
        p
        for p in study.points
        if p.runs and _is_ycsb(p.summary.workload or p.runs[0].record.workload)
    ]


def ycsb_section(study: ResultsView) -> Markup:
    """The section, or nothing when the study ran no YCSB workload."""
    points = _ycsb_points(study)
    if not points:
        return Markup()
    headers = ["point", "operation", "configured %", "measured %", "off the mix", "operations",
               "p50 ms", "p95 ms", "p99 ms", "max ms"]  # fmt: skip
    rows = [row for point in points for row in mix_rows(point)]
    parts = [
        element("h2", "YCSB: operation mix and latency by operation", id="ycsb"),
        element("p", "Each point's operations over its measured runs: the share its workload "
                "asked for, the share it ran (marked off the mix beyond "
                f"{MARK_SE:g} standard errors of sampling), and each operation's latency from "
                "the merged histograms. One operation is one transaction: a read-modify-write's "
                "read and update together."),
        table_block(headers, rows),
    ]  # fmt: skip
    return join(parts, "\n")


def ycsb_link(study: ResultsView) -> Markup | None:
    return element("a", "YCSB", href="#ycsb") if _ycsb_points(study) else None
