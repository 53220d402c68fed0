"""Lifecycle hooks: variables, logs, order (setup, ready, teardown; one size left before the next
is entered), and failures: a hook that exits non-zero or hangs stops its target only."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import ModuleType

import pytest

from dbscale.plan.targets import prepare_targets
from dbscale.targets.hooks import HookError, run_hook
from dbscale.targets.lifecycle import TargetFailedError, TargetPool
from dbscale.targets.local.server import free_port
from dbscale.targets.spec import HookCommand, TargetEntry
from dbscale.targets.variables import target_variables
from tests.conftest import PgTestServer


def _state(pid: int) -> str | None:
    """A process's state letter, or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next(line.split()[1] for line in status.splitlines() if line.startswith("State:"))


def test_hook_gets_variables_and_logs_its_output(tmp_path: Path) -> None:
    [target] = prepare_targets(
        [TargetEntry(name="db", url="postgresql://h/db", vcpus=4, memory_gib=15)], {}
    )
    variables = {**target_variables(target), "results_dir": str(tmp_path)}
    command = HookCommand(run="echo tier=db-custom-{vcpus}-{memory_mb} env=$DBSCALE_TARGET_VCPUS")
    result = run_hook(
        "db", "setup", command, variables=variables, default_timeout_s=10,
        results_dir=tmp_path, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert result.exit_code == 0
    assert result.command == "echo tier=db-custom-4-15360 env=$DBSCALE_TARGET_VCPUS"
    log = (tmp_path / "hooks" / "db-setup.log").read_text()
    assert "tier=db-custom-4-15360 env=4\n" in log
    assert "# exit 0 after" in log


def test_failing_hook_raises_with_its_log(tmp_path: Path) -> None:
    with pytest.raises(HookError) as info:
        run_hook(
            "db", "ready", HookCommand(run="echo no capacity >&2; exit 3"), variables={},
            default_timeout_s=10, results_dir=tmp_path, env={},
        )  # fmt: skip
    assert "hook ready exited with 3" in info.value.message
    assert "db-ready.log" in info.value.hint
    assert "no capacity" in (tmp_path / "hooks" / "db-ready.log").read_text()


def test_hanging_hook_is_killed_with_its_whole_process_group(tmp_path: Path) -> None:
    script = "sleep 60 & echo $! > child; sleep 60"
    started = time.monotonic()
    with pytest.raises(HookError, match=r"still running after 0\.5 s and was killed"):
        run_hook(
            "db", "setup", HookCommand(run=script, timeout=0.5), variables={},
            default_timeout_s=600, results_dir=tmp_path, env={},
        )  # fmt: skip
    assert time.monotonic() - started < 5
    child = int((tmp_path / "child").read_text())
    deadline = time.monotonic() + 5
    while _state(child) not in (None, "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(child) in (None, "Z"), "the hook's background child survived"
    assert "# killed after timeout" in (tmp_path / "hooks" / "db-setup.log").read_text()


def _pool_targets(url: str, order: Path, setup: dict[str, str] | None = None) -> list[TargetEntry]:
    """Two sizes of one server whose hooks append `NAME HOOK` to `order`."""
    entries = []
    for name in ("small", "large"):
        hooks = {h: f"echo {{name}} {h} >> {order}" for h in ("setup", "ready", "teardown")}
        hooks.update({"setup": (setup or {})[name]} if name in (setup or {}) else {})
        entries.append(TargetEntry(name=name, url=url, group="g", hooks=hooks))
    return prepare_targets(entries, {})


def test_one_size_is_left_before_the_next_is_entered(
    test_pg: PgTestServer, core: ModuleType, tmp_path: Path
) -> None:
    order = tmp_path / "order"
    with TargetPool(_pool_targets(test_pg.url, order), tmp_path, env={}) as pool:
        assert pool["small"].url == test_pg.url
        assert pool["small"] is pool["small"]  # entered once
        pool["large"]
    assert order.read_text().split("\n")[:-1] == [
        "small setup", "small ready", "small teardown",
        "large setup", "large ready", "large teardown",
    ]  # fmt: skip
    record = json.loads((tmp_path / "targets" / "small.json").read_text())
    assert record["server"]["dialect"] == "postgresql"  # older files: "postgres", read the same
    assert record["server"]["version"].startswith(record["server"]["settings"]["server_version"])
    assert "shared_buffers" in record["server"]["key_settings"]
    assert [h["hook"] for h in record["hooks"]] == ["setup", "ready", "teardown"]


def test_failed_setup_skips_that_target_and_tears_down(
    test_pg: PgTestServer, core: ModuleType, tmp_path: Path
) -> None:
    order = tmp_path / "order"
    targets = _pool_targets(test_pg.url, order, {"small": f"echo bad setup >> {order}; exit 7"})
    with TargetPool(targets, tmp_path, env={}) as pool:
        with pytest.raises(TargetFailedError, match="target small: hook setup exited with 7"):
            pool["small"]
        with pytest.raises(TargetFailedError):  # refused again, without running hooks again
            pool["small"]
        assert pool["large"].url == test_pg.url
    assert order.read_text().split("\n")[:-1] == [
        "bad setup", "small teardown",  # setup had begun: its teardown cleans up
        "large setup", "large ready", "large teardown",
    ]  # fmt: skip
    assert list(pool.failed) == ["small"]


def test_hung_setup_and_a_server_that_never_answers(core: ModuleType, tmp_path: Path) -> None:
    hung = TargetEntry.model_validate(
        {"name": "hung", "url": "postgresql://u@127.0.0.1:1/db",
         "hooks": {"setup": {"run": "sleep 60", "timeout": "300ms"}}}
    )  # fmt: skip
    silent = TargetEntry.model_validate(
        {"name": "silent", "url": f"postgresql://u@127.0.0.1:{free_port()}/db",
         "hooks": {"connect_timeout": "1s"}}
    )  # fmt: skip
    with TargetPool([hung, silent], tmp_path, env={}) as pool:
        with pytest.raises(TargetFailedError, match=r"hook setup was still running after 0\.3 s"):
            pool["hung"]
        started = time.monotonic()
        with pytest.raises(TargetFailedError, match="did not accept connections within 1 s"):
            pool["silent"]
        assert time.monotonic() - started < 4


def test_hooks_do_not_inherit_the_password_unless_they_name_it(
    test_pg: PgTestServer, core: ModuleType, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    hooks = {
        "setup": f"env > {seen}.setup",  # a hook that logs its whole environment
        "ready": f'echo "pw=$DBX_SECRET" > {seen}.ready',  # one that asks for the password
    }
    entry = TargetEntry(name="db", url=test_pg.url, password_env="DBX_SECRET", hooks=hooks)
    env = {"DBX_SECRET": "hunter2-secret", "PATH": "/usr/bin:/bin"}
    [target] = prepare_targets([entry], env)
    with TargetPool([target], tmp_path, env=env) as pool:
        pool["db"]
    assert "hunter2-secret" not in Path(f"{seen}.setup").read_text()
    assert "PATH=" in Path(f"{seen}.setup").read_text()  # the rest of the environment is there
    assert Path(f"{seen}.ready").read_text() == "pw=hunter2-secret\n"
    assert "hunter2-secret" not in (tmp_path / "hooks" / "db-setup.log").read_text()
