"""What one run record says about how it was run, read tolerantly: the facts a study can sweep
(clients, target, protocol, workload parameters, ...), its throughput in the study's unit, and the
optional facts other parts of dbscale add (vCPU counts, host facts, plan axes).

Records are runs.jsonl lines (docs/results.md). Fields added by later work are looked up under the
names that work uses and ignored when absent, so older result directories still render.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from dbscale.targets.url import redact_url

Value = str | int | float | bool | None
Record = Mapping[str, Any]

# Facts a study can sweep, in the order that decides which axis is "the" x axis when several vary
# together (a later fact that is a function of earlier ones is shown, not swept).
FACT_ORDER: tuple[str, ...] = (
    "clients", "rate_tps", "vcpus", "target", "workload", "protocol", "connect", "tls",
    "max_tries", "threads", "duration_s",
)  # fmt: skip
FACT_TITLES: dict[str, str] = {
    "clients": "clients",
    "rate_tps": "target rate (TPS)",
    "vcpus": "vCPUs",
    "target": "target",
    "workload": "workload",
    "protocol": "protocol",
    "connect": "connections",
    "tls": "TLS",
    "max_tries": "max tries",
    "threads": "threads",
    "duration_s": "duration (s)",
}
PARAM_PREFIX = "param."
PLAN_PREFIX = "axis."


def _config(record: Record) -> Mapping[str, Any]:
    config = record.get("config")
    return config if isinstance(config, Mapping) else {}


def _plain(value: Any) -> Value:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    return str(value)


def target_label(record: Record) -> str:
    """A short name for the run's target: a plan's target name, else host:port/db of the URL."""
    target = _config(record).get("target") or {}
    for name in (record.get("target_name"), target.get("name")):
        if isinstance(name, str) and name:
            return name
    url = record.get("target")
    if not isinstance(url, str):
        url = (_config(record).get("target") or {}).get("url", "")
    return _short_url(redact_url(str(url))) if url else "?"


def _short_url(url: str) -> str:
    if "://" not in url:
        return url
    rest = url.split("://", 1)[1]
    return rest.split("@", 1)[1] if "@" in rest else rest


def vcpus(record: Record) -> int | None:
    """The target's vCPU count when something recorded it (a plan's target, or observation)."""
    candidates: list[Any] = [
        record.get("vcpus"),
        (record.get("target_info") or {}).get("vcpus"),
        (_config(record).get("target") or {}).get("vcpus"),
        ((record.get("observe") or {}).get("server") or {}).get("vcpus"),
    ]
    for value in candidates:
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return int(value)
    return None


def run_facts(record: Record) -> dict[str, Value]:
    """Every fact of the run that a study could sweep, keyed as axes are keyed."""
    config = _config(record)
    target_config = config.get("target")
    target: Mapping[str, Any] = target_config if isinstance(target_config, Mapping) else {}
    facts: dict[str, Value] = {
        "clients": _plain(record.get("clients", config.get("clients"))),
        "rate_tps": _plain(config.get("rate_tps", record.get("rate_tps"))),
        "vcpus": vcpus(record),
        "target": target_label(record),
        "workload": _plain(record.get("workload") or (config.get("workload") or {}).get("name")),
        "protocol": _plain(record.get("protocol", config.get("protocol"))),
        "connect": _plain(record.get("connect", config.get("connect"))),
        "tls": _plain(target.get("tls") if target.get("tls") is not None else record.get("tls")),
        "max_tries": _plain(config.get("max_tries")),
        "threads": _plain(record.get("threads") or config.get("threads")),
        "duration_s": _plain(config.get("duration_s")),
    }
    params = record.get("workload_params") or (config.get("workload") or {}).get("params") or {}
    if isinstance(params, Mapping):
        for name, value in params.items():
            facts[PARAM_PREFIX + str(name)] = _plain(value)
    # A plan's own axes (the study work) name what it swept; they come first.
    plan_axes = record.get("point")
    if isinstance(plan_axes, Mapping):
        for name, value in plan_axes.items():
            facts[PLAN_PREFIX + str(name)] = _plain(value)
            # The plan's axis stands for the fact it sets (`clients`, `params.scale`, `target`).
            bare = str(name).removeprefix("params.")
            for shadowed in (bare, PARAM_PREFIX + bare):
                facts.pop(shadowed, None)
    return facts


def fact_title(key: str) -> str:
    if key.startswith(PARAM_PREFIX):
        return key[len(PARAM_PREFIX) :]
    if key.startswith(PLAN_PREFIX):
        bare = key[len(PLAN_PREFIX) :]
        return FACT_TITLES.get(bare, bare.removeprefix("params."))
    return FACT_TITLES.get(key, key)


def throughput_unit(records: list[Record]) -> str:
    """`tpmC` when every run is TPC-C with New-Order counts, else `TPS`."""
    if records and all(_new_order_count(r) is not None for r in records):
        return "tpmC"
    return "TPS"


def throughput(record: Record, unit: str) -> float:
    if unit == "tpmC":
        count = _new_order_count(record) or 0
        duration = float(record.get("duration_s") or 0.0)
        return 60.0 * count / duration if duration > 0 else math.nan
    return float(record.get("tps") or 0.0)


def _new_order_count(record: Record) -> int | None:
    if not str(record.get("workload", "")).startswith("tpcc"):
        return None
    types = record.get("transaction_types") or {}
    for name in ("new_order", "new-order", "neworder"):
        entry = types.get(name)
        if isinstance(entry, Mapping) and isinstance(entry.get("transactions"), int):
            return int(entry["transactions"])
    return None


def host_facts(record: Record) -> dict[str, str]:
    """Facts about the client host when the run recorded them (observation adds `host`)."""
    for source in (
        record.get("host"),
        (record.get("observe") or {}).get("host"),
        (record.get("observe") or {}).get("client"),
    ):
        if isinstance(source, Mapping):
            return {str(k): str(v) for k, v in source.items() if not isinstance(v, Mapping | list)}
    return {}


def _positive(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0
