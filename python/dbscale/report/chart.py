"""A chart of the report: its stable id, kind, title, caption and Vega-Lite spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Chart:
    id: str  # stable, file-name safe: "throughput-vs-clients"
    kind: str  # throughput | latency | configurations | per-vcpu | price-performance |
    # variation | timeline | spectrum | resources | wait-events | tpcc-scaling | tpcc-per-vcpu |
    # tpcc-price
    title: str
    caption: str
    spec: dict[str, Any]
