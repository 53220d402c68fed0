"""One threshold as written, `METRIC OP BOUND`: `p99_ms < 20`, `errors_pct < 0.1`,
`tpmc_per_vcpu >= 12000`, `tps >= 0.95 * baseline` (the same metric of the same point in a
baseline: a results directory or a history store). METRIC is any run metric `rank` and `history`
know (results/metrics.py), or a capacity search's answer (`capacity`, `capacity_per_vcpu`,
`cost_per_capacity`), OP one of < <= > >=, BOUND a number, `baseline` or `F * baseline`."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from dbscale.errors import ConfigError
from dbscale.results.metrics import CAPACITY_METRICS, RUN_METRICS, Metric, metric_named

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}  # fmt: skip
HINT = ("write METRIC OP BOUND, e.g. 'p99_ms < 20', 'errors_pct < 0.1' or "
        "'tps >= 0.95 * baseline'; metrics: " + ", ".join(m.name for m in RUN_METRICS))  # fmt: skip
_SHAPE = re.compile(r"^\s*(?P<metric>[A-Za-z_][\w:.*-]*)\s*(?P<op><=|>=|<|>)\s*(?P<bound>.+?)\s*$")
_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"
_BASELINE = re.compile(rf"^(?:(?P<f1>{_NUMBER})\s*\*\s*)?baseline(?:\s*\*\s*(?P<f2>{_NUMBER}))?$")


@dataclass(frozen=True)
class Threshold:
    text: str  # as written, spaces normalised
    metric: Metric
    op: str
    limit: float | None  # a fixed bound; None: `factor` x the baseline's value
    factor: float | None = None

    @property
    def of_capacity(self) -> bool:
        return self.metric in CAPACITY_METRICS

    @property
    def needs_baseline(self) -> bool:
        return self.limit is None

    @property
    def upper(self) -> bool:
        """The bound is a ceiling (`<`, `<=`): values must stay below it."""
        return self.op in ("<", "<=")

    def holds(self, value: float, limit: float) -> bool:
        return OPERATORS[self.op](value, limit)


def parse_threshold(text: str) -> Threshold:
    """A threshold, or a ConfigError naming what is wrong with it."""
    found = _SHAPE.match(text)
    if found is None:
        raise ConfigError(f"threshold {text!r} is not METRIC OP BOUND", HINT)
    name, op, bound = found["metric"], found["op"], found["bound"]
    metric = metric_named(name)
    if metric is None or (metric.of_run is None and metric not in CAPACITY_METRICS):
        raise ConfigError(f"threshold {text!r}: {name!r} is not a run or capacity metric", HINT)
    words = f"{name} {op} {bound}"
    if re.fullmatch(_NUMBER, bound):
        return Threshold(words, metric, op, float(bound))
    base = _BASELINE.match(bound)
    if base is None:
        raise ConfigError(f"threshold {text!r}: the bound {bound!r} is neither a number nor "
                          "F * baseline", HINT)  # fmt: skip
    factor = float(base["f1"] or base["f2"] or 1.0)
    if factor <= 0:
        raise ConfigError(f"threshold {text!r}: the baseline's factor must be positive", HINT)
    return Threshold(words, metric, op, None, factor)
