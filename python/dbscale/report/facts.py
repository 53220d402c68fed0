"""What one run record says about how it was run: the facts a study can sweep (clients, target,
protocol, workload parameters, ...), its throughput in the study's unit, and the optional facts
other parts of dbscale add (vCPU counts, host facts, plan axes), absent in older records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dbscale.results.record import RunRecord
from dbscale.targets.url import short_address

Value = str | int | float | bool | None

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
    "transactions": "transactions per client",
}
PARAM_PREFIX = "param."
PLAN_PREFIX = "axis."


def _plain(value: object) -> Value:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    return str(value)


def target_label(record: RunRecord) -> str:
    """A short name for the run's target: a plan's target name, else host:port/db of the URL."""
    if record.target_name:
        return record.target_name
    url = record.target or (record.config.target.url if record.config is not None else "")
    return short_address(url) if url else "?"


def vcpus(record: RunRecord) -> int | float | None:
    """The target's vCPU count when something recorded it (a plan's target, or observation);
    a local cluster's nodes may have fractions of a CPU (1.5 over 3 nodes of 0.5)."""
    observed = record.observe.server.vcpus if record.observe is not None else None
    for value in (record.target_info.get("vcpus"), observed):
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return int(value) if float(value).is_integer() else float(value)
    return None


def run_facts(record: RunRecord) -> dict[str, Value]:
    """Every fact of the run that a study could sweep, keyed as axes are keyed."""
    config = record.config
    if config is None:  # a record without its configuration: what the result itself says
        facts: dict[str, Value] = {
            "clients": record.clients, "rate_tps": _plain(record.rate_tps),
            "vcpus": vcpus(record), "target": target_label(record), "workload": record.workload,
            "protocol": record.protocol, "connect": record.connect, "tls": record.tls,
            "max_tries": None, "threads": record.threads, "duration_s": record.duration_s,
        }  # fmt: skip
        params: Mapping[str, Any] = record.workload_params
    else:
        facts = {
            "clients": _plain(record.clients or config.clients),
            "rate_tps": _plain(config.rate_tps if config.rate_tps is not None else record.rate_tps),
            "vcpus": vcpus(record),
            "target": target_label(record),
            "workload": _plain(record.workload or config.workload.name),
            "protocol": _plain(record.protocol or config.protocol),
            "connect": _plain(record.connect or config.connect),
            "tls": _plain(config.target.tls if config.target.tls is not None else record.tls),
            "max_tries": _plain(config.max_tries),
            "threads": _plain(record.threads or config.threads),
            "duration_s": _plain(config.duration_s),
        }
        params = record.workload_params or config.workload.params
    if record.per_client_transactions is not None:  # a counted run: its duration is a limit
        del facts["duration_s"]
        facts["transactions"] = record.per_client_transactions
    for name, value in params.items():
        facts[PARAM_PREFIX + name] = _plain(value)
    # A plan's own axes (the study work) name what it swept; they come first.
    for name, value in record.point.items():
        facts[PLAN_PREFIX + name] = _plain(value)
        # The plan's axis stands for the fact it sets (`clients`, `params.scale`, `target`).
        bare = name.removeprefix("params.")
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


def throughput(record: RunRecord, unit: str) -> float:
    """The run's throughput in the study's unit (TPS, or tpmC)."""
    if unit == "tpmC":
        return record.tpmc if record.tpmc is not None else math.nan
    return record.tps


def host_facts(record: RunRecord) -> dict[str, str]:
    """Facts about the client host when the run was observed."""
    return record.observe.host.shown() if record.observe is not None else {}
