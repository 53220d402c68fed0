"""A recipe's published findings beside the measured shape (issue 42): a ratio agrees when the
measured interval overlaps the published range, differs when it does not, is undecided when the
interval also holds no difference; a peak agrees when the sweep peaked where it was published."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from dbscale.report.published_section import (
    AGREES,
    DIFFERS,
    UNDECIDED,
    UNMEASURED,
    compare_findings,
)
from dbscale.results.directory import PlanFile
from tests.report.fixtures import record, view_of

PUBLISHED = {
    "source": "seed 002",
    "findings": [
        {"says": "sockets about 7% faster",
         "ratio": {"axis": "transport", "value": "unix", "over": "tcp", "low": 1.03, "high": 1.1}},
        {"says": "a peak", "peak": {"axis": "clients", "values": ["8"]}},
        {"says": "words only"},
    ],
}  # fmt: skip


def _study(unix_over_tcp: float, noise: float, runs: int = 6) -> Any:
    rng = random.Random(7)
    records = []
    for _rep in range(runs):
        for transport, factor in (("unix", unix_over_tcp), ("tcp", 1.0)):
            for clients in (2, 8):
                tps = 1000.0 * factor * (1 + clients / 10) * (1 + rng.gauss(0, noise))
                records.append(record(clients=clients, tps=tps, seed=len(records) + 1,
                                      extra={"point": {"transport": transport,
                                                       "clients": clients}}))  # fmt: skip
    plan = PlanFile.model_validate({"plan": {"name": "socket-vs-tcp", "published": PUBLISHED}})
    return view_of(records, Path("x"), plan=plan)


def test_a_measured_ratio_inside_the_published_range_agrees() -> None:
    ratio, peak, words = compare_findings(_study(1.065, 0.005), _study(1, 0).published)
    assert ratio.verdict == AGREES and "1.06x [" in ratio.measured, ratio
    assert ratio.published == "unix / tcp: 1.03x to 1.10x"
    assert peak.verdict == AGREES and peak.measured == "clients = 8"
    assert words.verdict == UNMEASURED


def test_a_ratio_outside_differs_and_a_wide_one_is_undecided() -> None:
    study = _study(1.5, 0.005)
    [ratio, *_] = compare_findings(study, study.published)
    assert ratio.verdict == DIFFERS, ratio
    noisy = _study(1.0, 0.08)
    [ratio, *_] = compare_findings(noisy, noisy.published)
    assert ratio.verdict == UNDECIDED, ratio
