"""TPC-C sized by the target's vCPUs, as the Cloud Report runs it: `warehouses_per_vcpu` active
warehouses per vCPU with one worker (client) each, `connections_per_vcpu` connections per vCPU of
every host, and `loaded_warehouses_per_vcpu` warehouses loaded (one load serves every point).
These are plan parameters: each point turns them into the engine's `active_warehouses`,
`warehouses`, `connections` and its client count, from its target's `vcpus`."""

from __future__ import annotations

from dbscale.errors import PlanError
from dbscale.modes import WorkloadFamily
from dbscale.values import ParamValue

SIZING_PARAMS = {
    "warehouses_per_vcpu": "active warehouses per vCPU of the target; workers (clients) = active "
    "warehouses (plans only: needs the target's vcpus)",
    "loaded_warehouses_per_vcpu": "warehouses loaded per vCPU (default: warehouses_per_vcpu)",
    "connections_per_vcpu": "connections per vCPU of each host the workers share (the Cloud "
    "Report: 4)",
}


def sized(
    family: WorkloadFamily,
    params: dict[str, ParamValue],
    vcpus: int | float | None,
    hosts: int,
    target: str,
) -> tuple[dict[str, ParamValue], int | None]:
    """The engine's parameters and the client count for a point; (params, None) when the
    point uses no sizing parameter (or is not TPC-C)."""
    if family is not WorkloadFamily.TPCC or not any(k in params for k in SIZING_PARAMS):
        return params, None
    if vcpus is None:
        raise PlanError(
            f"target {target}: warehouses_per_vcpu needs the target's vcpus",
            "set `vcpus:` on the target (or `--set targets.NAME.vcpus=N`)",
        )
    rest: dict[str, ParamValue] = {k: v for k, v in params.items() if k not in SIZING_PARAMS}
    per_vcpu = _number(params.get("warehouses_per_vcpu", 0))
    loaded = _number(params.get("loaded_warehouses_per_vcpu", per_vcpu))
    clients = None
    if per_vcpu > 0:
        active = max(1, round(per_vcpu * vcpus))
        rest["active_warehouses"] = active
        clients = active
    if loaded > 0:
        rest["warehouses"] = max(1, round(loaded * vcpus), int(rest.get("active_warehouses", 1)))
    if "connections_per_vcpu" in params:
        rest["connections"] = max(1, round(_number(params["connections_per_vcpu"]) * vcpus * hosts))
    return rest, clients


def _number(value: object) -> float:
    try:
        return float(str(value))
    except ValueError:
        raise PlanError(f"a TPC-C sizing parameter must be a number, got {value!r}", None) from None
