"""TPC-C's own section of the report: how each run was judged (the pass rule, its reasons), each
transaction type's latency against its limit, the run-time audits with their sampling intervals,
and the consistency check after the run. The console prints the same facts run by run
(run/console.py); here they stand side by side for the whole study.
"""

from __future__ import annotations

from dbscale.core.result import TpccRule, TpccSection
from dbscale.report.markup import Markup, element, join
from dbscale.report.tables import Cell, table_block
from dbscale.report.view import ResultsView, RunView

# The engine's order of TPC-C's transaction types: the rule's p90 limits follow it.
TPCC_TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")


def _tpcc_runs(study: ResultsView) -> list[tuple[RunView, TpccSection]]:
    return [
        (run, run.record.tpcc)
        for point in study.points
        for run in point.runs
        if run.record.tpcc is not None
    ]


def rule_words(rule: TpccRule) -> str:
    """The rule a run was judged by, in words."""
    if rule.name == "spec":
        limits = ", ".join(
            f"{name} {limit:g} s"
            for name, limit in zip(TPCC_TYPES, rule.p90_limits_s, strict=False)
        )
        return (
            f"the specification's (with keying and think times): each type's 90th percentile "
            f"under its limit ({limits}) and an efficiency of at least {rule.min_efficiency_pct:g}%"
        )
    return (
        f"the Cloud Report's (no waits): New-Order's 95th percentile under "
        f"{rule.new_order_p95_limit_s:g} s"
    )


def _type_limit(rule: TpccRule, name: str, quantile: str) -> float | None:
    """The limit of `name`'s `quantile` (p90 or p95) under the rule, in ms; None: none."""
    if rule.name == "spec" and quantile == "p90" and name in TPCC_TYPES:
        index = TPCC_TYPES.index(name)
        if index < len(rule.p90_limits_s):
            return rule.p90_limits_s[index] * 1000
    if rule.name != "spec" and quantile == "p95" and name == "new_order":
        return rule.new_order_p95_limit_s * 1000
    return None


def _audit_cell(tpcc: TpccSection) -> str:
    judged = [a for a in tpcc.audits if a.status != "skip"]
    off = [a for a in judged if a.status != "pass"]
    if not judged:
        return "not judged"
    if not off:
        return f"{len(judged)} within their intervals"
    return f"{len(off)} of {len(judged)} outside: " + ", ".join(a.name for a in off)


def _consistency_cell(run: RunView) -> str:
    section = run.record.consistency
    if section is None:
        return "not checked"
    if section.error:
        return f"could not run: {section.error}"
    if section.unfinished:
        return "unfinished"
    if section.ok:
        return f"{len(section.conditions)} conditions held"
    return "failed: " + ", ".join(section.failed)


def run_rows(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    headers = ["run", "tpmC", "efficiency %", "warehouses (active)", "verdict", "reasons",
               "audits", "consistency"]  # fmt: skip
    rows: list[list[Cell]] = []
    for run, tpcc in _tpcc_runs(study):
        rows.append([
            run.label, tpcc.tpmc,
            round(tpcc.efficiency_pct, 1) if tpcc.efficiency_meaningful else "n/a (no waits)",
            f"{tpcc.warehouses} ({tpcc.active_warehouses})",
            "PASS" if tpcc.passed else "FAIL", "; ".join(tpcc.reasons + tpcc.warnings) or "–",
            _audit_cell(tpcc), _consistency_cell(run),
        ])  # fmt: skip
    return headers, rows


def type_rows(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    """Each point's transaction types from the merged histograms of its runs, with the limit
    its rule sets."""
    headers = ["point", "type", "p50 ms", "p90 ms", "p90 limit ms", "p95 ms", "p95 limit ms",
               "p99 ms", "max ms", "within"]  # fmt: skip
    rows: list[list[Cell]] = []
    for point in study.points:
        judged = [r.record.tpcc for r in point.runs if r.record.tpcc is not None]
        if not judged:
            continue
        rule = judged[0].rule
        for name in TPCC_TYPES:
            figures = point.summary.transaction_types.get(name)
            if figures is None:
                continue
            p90_limit = _type_limit(rule, name, "p90")
            p95_limit = _type_limit(rule, name, "p95")
            checks = [(figures.p90, p90_limit), (figures.p95, p95_limit)]
            limited = [(v, lim) for v, lim in checks if lim is not None and v is not None]
            within = "–" if not limited else ("yes" if all(v < lim for v, lim in limited) else "no")
            rows.append([
                point.label, name, figures.p50, figures.p90, p90_limit, figures.p95, p95_limit,
                figures.p99, figures.max, within,
            ])  # fmt: skip
    return headers, rows


def audit_rows(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    """The audits each run was judged by (those it had too few transactions for left out)."""
    headers = ["run", "audit", "observed", "99.9% interval", "status", "note"]
    rows: list[list[Cell]] = []
    for run, tpcc in _tpcc_runs(study):
        for audit in tpcc.audits:
            if audit.status != "skip":
                rows.append([run.label, audit.name, audit.value,
                             f"{audit.low:.4g} – {audit.high:.4g}", audit.status,
                             audit.note or "–"])  # fmt: skip
    return headers, rows


def _audits_part(study: ResultsView) -> Markup:
    headers, rows = audit_rows(study)
    if rows:
        return table_block(headers, rows)
    notes = {a.note for _, t in _tpcc_runs(study) for a in t.audits if a.note}
    reason = sorted(notes)[0].split("; ")[-1] if notes else "too few transactions"
    return element("p", f"No run was long enough to judge the audits ({reason}).")


def tpcc_section(study: ResultsView) -> Markup:
    """The section, or nothing when the study ran no TPC-C."""
    judged = _tpcc_runs(study)
    if not judged:
        return Markup()
    rules = sorted({rule_words(t.rule) for _, t in judged})
    passed = sum(1 for _, t in judged if t.passed)
    parts = [
        element("h2", "TPC-C: pass rule, latency by type, audits, consistency", id="tpcc"),
        element("p", f"{passed} of {len(judged)} measured runs passed. A run passes by "
                f"{'; '.join(rules)}. Efficiency is tpmC against the most the active warehouses "
                "allow with waits (12.86 per warehouse per minute); without waits it means "
                "nothing and is not judged. Audits (clause 9.2) are judged against the 99.9% "
                "sampling interval of the share they observe, so an unbiased run passes them."),
        table_block(*run_rows(study)),
        element("h3", "Latency by transaction type", id="tpcc-types"),
        element("p", "Each point's merged histograms of its runs, against the rule's limits."),
        table_block(*type_rows(study)),
        element("h3", "Audits", id="tpcc-audits"),
        _audits_part(study),
    ]  # fmt: skip
    return join(parts, "\n")


def tpcc_link(study: ResultsView) -> Markup | None:
    return element("a", "TPC-C", href="#tpcc") if _tpcc_runs(study) else None
