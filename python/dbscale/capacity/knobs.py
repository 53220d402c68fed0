"""What each knob of a capacity search means for its levels: where the search starts and how far
it may go, what a level changes in the point it runs, and which transactions judge it.

- `rate`: the offered rate of an open model at the point's clients, from half the saturated
  throughput up to 1.25 times it.
- `clients`: closed-loop clients, from the point's.
- `warehouses`: TPC-C's active warehouses up to the loaded ones, a terminal each without waits
  (ten with them).
- `analytic_streams`: CH-benCHmark's analytic streams beside a fixed set of terminals, from 1 up
  to the point's `analytic_streams` (its clients minus those are the terminals), judged on the
  terminals' transactions alone: the queries' own seconds-long times are not what the objective
  is about, what they do to the terminals is.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbscale.capacity.search import CapacitySearch
from dbscale.errors import ConfigError
from dbscale.modes import WorkloadFamily
from dbscale.plan.objectives import CapacitySettings, Knob
from dbscale.plan.study import Point
from dbscale.results import ch_figures
from dbscale.values import ParamValue

RATE_CEILING = 1.25  # of the saturated throughput: offered beyond it cannot be delivered
RATE_FLOOR = 1e-3  # of the saturated throughput
CLIENTS_CEILING = 4096

UNIT_SUFFIX = {Knob.RATE: "/s", Knob.CLIENTS: " clients", Knob.WAREHOUSES: " warehouses",
               Knob.ANALYTIC_STREAMS: " streams"}  # fmt: skip


@dataclass(frozen=True)
class LevelChange:
    """What a level changes in the point: load settings and workload parameters."""

    load: dict[str, object]
    params: dict[str, ParamValue]


def _int_param(point: Point, name: str, default: int) -> int:
    return int(str(point.params.get(name, default)))


def _waits(point: Point) -> bool:
    return str(point.params.get("wait", True)).strip().lower() not in ("false", "0", "off", "no")


def check_knob(knob: Knob, base: Point) -> None:
    """Refuses a knob the point cannot be searched by, with a hint."""
    if knob is Knob.WAREHOUSES and "warehouses" not in base.params:
        raise ConfigError(
            "--knob warehouses searches up to the warehouses loaded: give their count",
            "--set warehouses=N (as loaded by dbscale prepare tpcc --set warehouses=N)",
        )
    if knob is Knob.ANALYTIC_STREAMS:
        if base.family is not WorkloadFamily.CH:
            raise ConfigError(
                f"--knob analytic_streams searches CH-benCHmark's streams; {base.workload} "
                "has none",
                "run it on the ch workload: dbscale capacity ch --knob analytic_streams ...",
            )
        streams = _int_param(base, ch_figures.STREAMS, 1)
        if streams < 2 or base.load.clients <= streams:
            raise ConfigError(
                f"--knob analytic_streams searches from 1 stream up to --set analytic_streams "
                f"(here {streams}) beside the other clients' terminals "
                f"({base.load.clients} clients)",
                "give the most streams to try and terminals beside them, e.g. -c 12 --set "
                "analytic_streams=8 (4 terminals, 1 to 8 streams)",
            )


def search_for(knob: Knob, base: Point, s: CapacitySettings, saturated: float) -> CapacitySearch:
    """The knob's search from its start between its floor and ceiling."""
    check_knob(knob, base)
    if knob is Knob.RATE:
        return CapacitySearch(start=saturated / 2, floor=max(saturated * RATE_FLOOR, 0.1),
                              ceiling=saturated * RATE_CEILING, resolution=s.resolution,
                              confirm=s.confirm)  # fmt: skip
    if knob is Knob.WAREHOUSES:
        loaded = _int_param(base, "warehouses", 1)
        start = _int_param(base, "active_warehouses", loaded) // 2
        ceiling = loaded
    elif knob is Knob.ANALYTIC_STREAMS:
        ceiling = _int_param(base, ch_figures.STREAMS, 1)
        start = ceiling // 2
    else:
        start, ceiling = base.load.clients, CLIENTS_CEILING
    return CapacitySearch(start=float(max(1, start)), floor=1.0, ceiling=float(ceiling),
                          resolution=s.resolution, confirm=s.confirm, integer=True)  # fmt: skip


def level_change(knob: Knob, base: Point, level: float) -> LevelChange:
    """What running `level` changes in `base`."""
    if knob is Knob.RATE:
        return LevelChange({"rate_tps": level}, {})
    if knob is Knob.CLIENTS:
        return LevelChange({"clients": int(level)}, {})
    if knob is Knob.WAREHOUSES:  # a terminal per active warehouse, ten each with waits (the spec)
        clients = int(level) * (10 if _waits(base) else 1)
        return LevelChange({"clients": clients}, {"active_warehouses": int(level)})
    terminals = base.load.clients - _int_param(base, ch_figures.STREAMS, 1)
    return LevelChange({"clients": terminals + int(level)}, {ch_figures.STREAMS: int(level)})


def judges_terminals(knob: Knob) -> bool:
    """Whether a level is judged on the terminals' transactions alone (not the queries')."""
    return knob is Knob.ANALYTIC_STREAMS
