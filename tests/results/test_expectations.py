"""Points that contradict what a setting is known to cost, by far, are flagged as suspicious."""

from __future__ import annotations

from dbscale.results.expectations import flag_contradictions
from dbscale.results.points import PointSummary, ThroughputSummary


def point(tls: str, median: float, cv: float, clients: int = 8) -> PointSummary:
    return PointSummary(
        point_key=f"clients={clients},tls={tls}",
        point={"clients": clients, "tls": tls},
        tps=ThroughputSummary(median=median, cv_pct=cv),
    )


def test_tls_far_faster_than_plain_is_suspicious_with_the_cvs() -> None:
    flagged = flag_contradictions([point("disable", 1000, 3.0), point("require", 1380, 4.0)])
    assert flagged[0].flags == []
    assert flagged[1].flags == [
        "suspicious: tls=require is 38% faster than tls=disable, which it should cost "
        "(runs' CV 4.0%, 3.0%): check the setup"
    ]


def test_within_the_margin_or_the_noise_or_another_sibling_is_not_flagged() -> None:
    assert (
        flag_contradictions([point("disable", 1000, 3.0), point("require", 1080, 3.0)])[1].flags
        == []
    )
    noisy = flag_contradictions([point("disable", 1000, 12.0), point("require", 1200, 3.0)])
    assert noisy[1].flags == []  # 20% is within twice a 12% CV
    apart = flag_contradictions([point("disable", 1000, 1.0, 4), point("require", 2000, 1.0, 8)])
    assert apart[1].flags == []  # different client counts: not siblings
    slower = flag_contradictions([point("disable", 1000, 1.0), point("require", 600, 1.0)])
    assert slower[1].flags == []  # the expected direction, however large
