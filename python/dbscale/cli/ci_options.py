"""The options CI uses (docs/thresholds.md): objectives that fail a build and the JUnit file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Threshold = Annotated[
    list[str] | None,
    typer.Option(
        "--threshold",
        help="An objective, repeatable: METRIC OP BOUND, e.g. 'p99_ms<20', 'errors_pct<0.1', "
        "'tps>=0.95*baseline'. Judged per point with its interval; a failure exits 11. Joins a "
        "plan's thresholds.",
        metavar="EXPR",
    ),
]
Baseline = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        help="What `baseline` in a threshold is: a results directory, or history:STORE (the "
        "newest point of the same series). A plan's thresholds.baseline.",
        metavar="DIR|history:STORE",
    ),
]
ThresholdsStrict = Annotated[
    bool,
    typer.Option(
        "--thresholds-strict",
        help="An inconclusive threshold (its interval straddles the limit) fails too.",
    ),
]
AbortOnFail = Annotated[
    bool,
    typer.Option(
        "--abort-on-fail",
        help="Stop the study once a threshold is clearly broken (after --abort-grace); the runs "
        "so far are kept.",
    ),
]
AbortGrace = Annotated[
    str | None,
    typer.Option(
        "--abort-grace",
        help="With --abort-on-fail: no stop in the study's first DURATION (default 0).",
        metavar="DURATION",
    ),
]
Junit = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        help="Also write the verdicts as a JUnit XML file for the CI's test view.",
        metavar="FILE",
    ),
]
