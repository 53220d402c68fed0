"""Lifecycle hooks: a target's `setup`, `ready` and `teardown` shell commands. Each runs with
`sh -c` in a session of its own (so a timeout kills everything it started, the whole process
group), the target's fields filled in as `{vcpus}` and exported as `DBSCALE_TARGET_VCPUS`, its
output appended to `hooks/<target>-<hook>.log` in the results directory. A hook that exits
non-zero or outlives its timeout raises `HookError`, which stops that target and no other.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from dbscale.errors import TargetError
from dbscale.targets.local.server import pid_alive
from dbscale.targets.spec import HookCommand
from dbscale.targets.variables import fill, variable_env

KILL_GRACE_S = 5.0  # between SIGTERM to the hook's process group and SIGKILL


class HookError(TargetError):
    """A target's lifecycle hook failed or hung: that target's points do not run."""

    default_hint = "see the hook's log in the results directory (hooks/<target>-<hook>.log)"


class HookResult(BaseModel):
    """What a hook did, for targets/<name>.json (`error` instead when it failed)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    hook: str
    command: str | None = None
    exit_code: int | None = None  # None: killed after its timeout
    duration_s: float | None = None
    timeout_s: float | None = None
    log: str | None = None
    error: str | None = None


def hook_env(env: Mapping[str, str], secret: str | None, command: str) -> dict[str, str]:
    """The environment a hook runs in: dbscale's, less the variable that holds the target's
    password (`password_env`), unless the hook's command names it (`$NAME` or `${NAME}`): a hook
    that logs its environment must not log a password it never asked for."""
    if secret is None or re.search(rf"\$\{{?{re.escape(secret)}\b", command):
        return dict(env)
    return {name: value for name, value in env.items() if name != secret}


def hook_log_path(results_dir: Path, target: str, hook: str) -> Path:
    return results_dir / "hooks" / f"{target}-{hook}.log"


def run_hook(
    target: str,
    hook: str,
    command: HookCommand,
    *,
    variables: Mapping[str, str],
    default_timeout_s: float,
    results_dir: Path,
    env: Mapping[str, str],
) -> HookResult:
    """Runs one hook to its end; raises `HookError` if it fails or hangs."""
    text = fill(command.run, variables, f"target {target}: hook {hook}")
    timeout_s = command.timeout or default_timeout_s
    log_path = hook_log_path(results_dir, target, hook)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"# {time.strftime('%Y-%m-%dT%H:%M:%S%z')} {hook} of {target}: {text}\n")
        log.flush()
        try:
            proc = subprocess.Popen(
                ["/bin/sh", "-c", text], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env={**env, **variable_env(variables)},
                cwd=results_dir, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise HookError(f"target {target}: hook {hook} could not start: {exc}") from None
        exit_code = _wait(proc, timeout_s)
        duration_s = time.monotonic() - started
        status = "killed after timeout" if exit_code is None else f"exit {exit_code}"
        log.write(f"# {status} after {duration_s:.1f} s\n")
    result = HookResult(
        hook=hook, command=text, exit_code=exit_code, duration_s=round(duration_s, 3),
        timeout_s=timeout_s, log=str(log_path),
    )  # fmt: skip
    if exit_code is None:
        raise HookError(
            f"target {target}: hook {hook} was still running after {timeout_s:g} s and was "
            f"killed: {text}",
            f"see {log_path}; raise its timeout (hooks.{hook}.timeout) if it needs longer",
        )
    if exit_code != 0:
        raise HookError(
            f"target {target}: hook {hook} exited with {exit_code}: {text}",
            f"see {log_path} for its output",
        )
    return result


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    """The exit code, or None after killing the process group at the timeout."""
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass
    except KeyboardInterrupt:
        kill_group(proc)
        raise
    kill_group(proc)
    return None


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the hook's whole process group, SIGKILL after a grace period."""
    for sig, grace_s in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            continue
        if not pid_alive(-proc.pid):  # the hook's process group
            break
    with suppress(ProcessLookupError):  # stragglers whose leader already exited
        os.killpg(proc.pid, signal.SIGKILL)
