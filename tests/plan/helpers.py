"""A small workload catalog and helpers for building studies: names and parameters declared
here, each point's workload built by the native core as in a real plan."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbscale.core.config import WorkloadConfig
from dbscale.plan.build import RunOptions, build_study
from dbscale.plan.catalog import Catalog
from dbscale.plan.study import Study

_SYSBENCH_PARAMS = {
    "tables": {"default": 1, "doc": ""},
    "table_size": {"default": 10000, "doc": ""},
    "range_size": {"default": 100, "doc": ""},
}
_DECLARED = Catalog.from_json(
    {
        "tpcb": {
            "family": "tpcb",
            "description": "TPC-B-like",
            "aliases": ["tpcb-like"],
            "params": {
                "scale": {"default": 1, "doc": ""},
                "vacuum": {"default": True, "doc": ""},
                "fillfactor": {"default": 100, "doc": ""},
            },
        },
        "tpcb-select-only": {
            "family": "tpcb",
            "description": "",
            "params": {"scale": {"default": 1, "doc": ""}},
        },
        "script": {
            "family": "script",
            "description": "",
            "params": {"scale": {"default": 1, "doc": ""}, "vacuum": {"default": True, "doc": ""}},
        },
        "sysbench:oltp_write_only": {
            "family": "sysbench",
            "description": "",
            "aliases": ["oltp_write_only"],
            "params": _SYSBENCH_PARAMS,
        },
        "sysbench:oltp_update_index": {
            "family": "sysbench",
            "description": "",
            "aliases": ["oltp_update_index"],
            "params": _SYSBENCH_PARAMS,
        },
        **{
            f"ycsb:{letter}": {
                "family": "ycsb",
                "description": "",
                "params": {"recordcount": {"default": 1000, "doc": ""}},
            }
            for letter in "abcdef"
        },
        "tpch": {
            "family": "tpch",
            "description": "",
            "params": {
                "scale_factor": {"default": 1.0, "doc": ""},
                "queries": {"default": "1-22", "doc": ""},
                "refresh": {"default": False, "doc": ""},
            },
        },
        "ch": {
            "family": "ch",
            "description": "",
            "params": {
                "warehouses": {"default": 1, "doc": ""},
                "wait": {"default": True, "doc": ""},
                "analytic_streams": {"default": 1, "doc": ""},
                "queries": {"default": "1-22", "doc": ""},
            },
        },
        "tpcc": {
            "family": "tpcc",
            "description": "",
            "params": {
                "warehouses": {"default": 1, "doc": ""},
                "active_warehouses": {"default": 0, "doc": ""},
                "wait": {"default": True, "doc": ""},
                "connections": {"default": 0, "doc": ""},
            },
        },
    }
)


def _built_by_core(config: WorkloadConfig) -> None:
    from dbscale import core  # the native module, loaded only when a plan is checked

    core.check_workload(config)


# The workloads' declarations are a small subset; the core builds each point's workload as in a
# real plan (values in range, scripts parsed).
CATALOG = replace(_DECLARED, builds=_built_by_core)

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def study(options: RunOptions, env: dict[str, str] | None = None) -> Study:
    return build_study(options, load_catalog=lambda: CATALOG, env=env or {}, now=NOW)


def plan_file(tmp_path: Path, text: str, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def study_from_text(tmp_path: Path, text: str, **options: Any) -> Study:
    return study(RunOptions(workload=str(plan_file(tmp_path, text)), **options))
