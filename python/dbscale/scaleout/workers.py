"""The small interface between the coordinator and its workers, and the local-process kind of
worker. A worker takes one request at a time: `submit(call, *args)` sends it and returns a
`Pending` whose `get(timeout_s)` is the answer, or `WorkerLost` naming the worker when it died
or did not answer in time. Ray actors are the other kind (ray_workers.py); the coordinator does
not know which it drives.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, Protocol

from dbscale.errors import RunError
from dbscale.scaleout.messages import Refusal

_EOF = object()


class WorkerLost(RunError):  # noqa: N818 - names what happened to the worker
    """A worker died or stopped answering; the run fails, the others' measurements are kept."""


class Pending(Protocol):
    def get(self, timeout_s: float) -> Any: ...


class Worker(Protocol):
    name: str  # for messages: `worker 2 on db-client-2 (10.0.0.7)` once its host is known

    def submit(self, call: str, *args: Any) -> Pending: ...

    def close(self) -> None: ...


class _PipePending:
    def __init__(self, worker: ProcessWorker) -> None:
        self.worker = worker

    def get(self, timeout_s: float) -> Any:
        try:
            line = self.worker.answers.get(timeout=timeout_s)
        except queue.Empty:
            raise WorkerLost(f"{self.worker.name} did not answer in {timeout_s:g} s") from None
        if line is _EOF:
            code = self.worker.process.poll()
            raise WorkerLost(f"{self.worker.name} ended (exit {code})")
        answer = json.loads(str(line))
        if "error" in answer:
            raise RunError(f"{self.worker.name}: {answer['error']}")
        return answer.get("ok")


class ProcessWorker:
    """A worker process on this machine (`python -m dbscale.scaleout.agent`)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dbscale.scaleout.agent"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_agent_env(),
            start_new_session=True,  # Ctrl-C is the coordinator's to handle
        )  # fmt: skip
        self.answers: queue.Queue[object] = queue.Queue()
        self.name = f"worker {index + 1} (local process {self.process.pid})"
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line)
        self.answers.put(_EOF)

    def submit(self, call: str, *args: Any) -> Pending:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps({"call": call, "args": list(args)}) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the answer is the end of its output: get() says the worker ended
        return _PipePending(self)

    def close(self) -> None:
        if self.process.poll() is None:
            if self.process.stdin is not None:
                with suppress(OSError):
                    self.process.stdin.close()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _agent_env() -> dict[str, str]:
    """This process's environment, with the package's own directory importable (a source
    checkout run without installing)."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def process_workers(count: int) -> list[Worker]:
    return [ProcessWorker(i) for i in range(count)]


def raise_refusal(answers: Sequence[Any]) -> None:
    """A worker's refusal (`{"error": ..., "kind": ...}`, e.g. tables missing) as that error."""
    from dbscale import errors

    found = next(
        (a for a in answers if isinstance(a, Refusal) or (isinstance(a, dict) and "error" in a)),
        None,
    )
    if found is None:
        return
    refused = Refusal.model_validate(found)
    kind = getattr(errors, refused.kind, errors.DbscaleError)
    if not (isinstance(kind, type) and issubclass(kind, errors.DbscaleError)):
        kind = errors.DbscaleError
    raise kind(refused.error, refused.hint)


def gather(pending: Sequence[Pending], timeout_s: float) -> list[Any]:
    """The answers of several workers' requests (sent already, so they work at once)."""
    return [p.get(timeout_s) for p in pending]
