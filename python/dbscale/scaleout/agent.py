"""A local worker process: `python -m dbscale.scaleout.agent` answers one JSON request per line on
standard input (`{"call": "poll", "args": []}`) with one JSON line on standard output (`{"ok":
...}` or `{"error": "..."}`), by the worker session (session.py). It ends when its input closes,
cancelling a run still going."""

from __future__ import annotations

import json
import signal
import sys

from pydantic import BaseModel, JsonValue

from dbscale.scaleout.session import WorkerSession

CALLS = ("info", "prepare", "load", "ready", "go", "poll", "cancel", "result")


class Reply(BaseModel):
    """One answer: `ok` with the call's result, or `error` in words."""

    ok: JsonValue = None
    error: str | None = None

    def line(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), separators=(",", ":"))


def answer(session: WorkerSession, line: str) -> Reply:
    try:
        request = json.loads(line)
        call = request["call"]
        if call not in CALLS:
            return Reply(error=f"unknown call {call!r}")
        result = getattr(session, call)(*request.get("args", []))
        # A message travels as JSON: the fields it has, as it has them.
        if isinstance(result, BaseModel):
            result = result.model_dump(mode="json", exclude_unset=True)
        return Reply(ok=result)
    except Exception as exc:  # every failure goes back to the coordinator, in words
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        return Reply(error=str(message))


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator decides; Ctrl-C is its
    session = WorkerSession()
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(answer(session, line).line() + "\n")
            sys.stdout.flush()
    session.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
