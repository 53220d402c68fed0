"""The catalog logic on a catalog written out here in the native JSON shape (no module needed)."""

from __future__ import annotations

import pytest

from dbscale.errors import ConfigError, InternalError
from dbscale.plan.catalog import Catalog

CATALOG_JSON = {
    "tpcb": {
        "family": "tpcb",
        "description": "TPC-B-like",
        "aliases": ["tpcb-like", "pgbench"],
        "params": {
            "scale": {"default": 1, "doc": "scale factor"},
            "fillfactor": {"default": 100, "doc": "fillfactor"},
        },
    },
    "tpcb-select-only": {
        "family": "tpcb",
        "description": "pgbench -S",
        "aliases": ["select-only"],
        "params": {"scale": {"default": 1, "doc": "scale factor"}},
    },
    "noaliases": {"family": "script", "description": "shape without aliases", "params": {}},
}


@pytest.fixture
def catalog() -> Catalog:
    return Catalog.from_json(CATALOG_JSON)


def test_names_and_aliases_resolve(catalog: Catalog) -> None:
    assert catalog.resolve("tpcb").name == "tpcb"
    assert catalog.resolve("tpcb-like").name == "tpcb"
    assert catalog.resolve("TPCB").name == "tpcb"
    assert catalog.resolve("select-only").name == "tpcb-select-only"
    assert catalog.resolve("noaliases").aliases == ()


def test_unknown_workload_names_the_known_ones(catalog: Catalog) -> None:
    with pytest.raises(ConfigError) as info:
        catalog.resolve("tpcc-ish")
    assert "tpcb, tpcb-select-only" in info.value.message
    assert "dbscale workloads" in info.value.hint


def test_close_names_are_suggested(catalog: Catalog) -> None:
    with pytest.raises(ConfigError) as info:
        catalog.resolve("tpbc")
    assert "did you mean 'tpcb'" in info.value.hint


def test_unknown_param_is_refused(catalog: Catalog) -> None:
    info_tpcb = catalog.resolve("tpcb")
    catalog.check_params(info_tpcb, {"scale": 3})
    with pytest.raises(ConfigError) as info:
        catalog.check_params(info_tpcb, {"scael": 3})
    assert "scale, fillfactor" in info.value.message
    assert "did you mean 'scale'" in info.value.hint


def test_malformed_catalog_is_internal() -> None:
    with pytest.raises(InternalError):
        Catalog.from_json(["not", "a", "dict"])
