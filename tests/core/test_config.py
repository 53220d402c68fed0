from __future__ import annotations

import json

import pytest

from dbscale.core.config import (
    ConnectMode,
    QueryProtocol,
    RunConfig,
    TargetConfig,
    TlsMode,
    WorkloadConfig,
    make_run_config,
)
from dbscale.errors import ConfigError

TARGET = TargetConfig(url="postgresql://bob:s3cret@127.0.0.1:5432/app")
WORKLOAD = WorkloadConfig(name="tpcb", params={"scale": 10, "vacuum": False})


def test_enums_serialize_kebab_case() -> None:
    config = RunConfig(
        target=TargetConfig(url="postgresql://x", tls=TlsMode.VERIFY_FULL),
        workload=WORKLOAD,
        protocol=QueryProtocol.PREPARED,
        connect=ConnectMode.PER_TRANSACTION,
    )
    data = json.loads(config.to_core_json())
    assert data["target"]["tls"] == "verify-full"
    assert data["protocol"] == "prepared"
    assert data["connect"] == "per-transaction"


def test_params_keep_their_types() -> None:
    data = json.loads(RunConfig(target=TARGET, workload=WORKLOAD).to_core_json())
    assert data["workload"]["params"] == {"scale": 10, "vacuum": False}


def test_round_trip() -> None:
    config = RunConfig(target=TARGET, workload=WORKLOAD, clients=8, seed=2**64 - 1)
    assert RunConfig.model_validate_json(config.to_core_json()) == config


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="extra"):
        RunConfig.model_validate({"target": {"url": "x"}, "workload": {"name": "w"}, "bogus": 1})


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("clients", 0, "--clients: must be at least 1"),
        ("threads", 0, "--threads: must be at least 1"),
        ("duration_s", 0, "--duration: must be at least 0.1"),
        ("rate_tps", -1.0, "--rate"),
        ("max_tries", 0, "--max-tries"),
        ("seed", -1, "--seed"),
        ("seed", 2**64, "--seed"),
        ("clients", 2**32, "--clients"),
        ("interval_s", 0.01, "interval"),
    ],
)
def test_bad_values_become_one_config_error(field: str, value: object, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_run_config(target=TARGET, workload=WORKLOAD, **{field: value})
    assert needle in info.value.message
    assert "\n" not in info.value.message


def test_redacted_config_has_no_password() -> None:
    config = RunConfig(target=TARGET, workload=WORKLOAD)
    assert "s3cret" not in json.dumps(config.redacted())
    assert "s3cret" in config.to_core_json()  # the core needs it
