"""A local worker process: `python -m dbscale.scaleout.agent` answers one JSON request per line on
standard input (`{"call": "poll", "args": []}`) with one JSON line on standard output (`{"ok":
...}` or `{"error": "..."}`), by the worker session (session.py). It ends when its input closes,
cancelling a run still going."""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

from pydantic import BaseModel

from dbscale.scaleout.session import WorkerSession

CALLS = ("info", "prepare", "load", "ready", "go", "poll", "cancel", "result")


def answer(session: WorkerSession, line: str) -> dict[str, Any]:
    try:
        request = json.loads(line)
        call = request["call"]
        if call not in CALLS:
            return {"error": f"unknown call {call!r}"}
        result = getattr(session, call)(*request.get("args", []))
        # A message travels as JSON: the fields it has, as it has them.
        if isinstance(result, BaseModel):
            result = result.model_dump(mode="json", exclude_unset=True)
        return {"ok": result}
    except Exception as exc:  # every failure goes back to the coordinator, in words
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        return {"error": message}


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator decides; Ctrl-C is its
    session = WorkerSession()
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(answer(session, line), separators=(",", ":")) + "\n")
            sys.stdout.flush()
    session.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
