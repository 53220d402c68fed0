"""The round-trip floor (bench/round_trip_floor.rs): a client that sends sysbench's point select
and only frames the reply. Its CPU per event is the least any client making one round trip per
statement can spend; vs_sysbench.py --floor runs it beside both tools to show where the kernel's
share leaves a target like "0.6x sysbench's CPU".

Built with rustc alone (std only) into .cache/, again whenever the source is newer.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "bench" / "round_trip_floor.rs"
BINARY = ROOT / ".cache" / "round_trip_floor"


def unavailable() -> str | None:
    """Why the floor client cannot be built here, or None."""
    return None if shutil.which("rustc") else "rustc is not on PATH"


def build() -> Path:
    if not BINARY.exists() or BINARY.stat().st_mtime < SOURCE.stat().st_mtime:
        BINARY.parent.mkdir(exist_ok=True)
        subprocess.run(["rustc", "-O", "--edition", "2021", "-o", str(BINARY), str(SOURCE)],
                       check=True)  # fmt: skip
    return BINARY


def command(url: str, tables: int, table_size: int, clients: int, seconds: int) -> list[str]:
    """The floor client's command line for the server and database a URL names (no password:
    the bench's private servers trust local logins)."""
    parts = urlsplit(url)
    mysql = parts.scheme in ("mysql", "mariadb")
    port = parts.port or (3306 if mysql else 5432)
    user = unquote(parts.username or ("root" if mysql else "postgres"))
    return [str(build()), "mysql" if mysql else "pg", parts.hostname or "127.0.0.1", str(port),
            user, unquote(parts.path.lstrip("/")), str(tables), str(table_size), str(clients),
            str(seconds)]  # fmt: skip


def parse(output: str) -> tuple[int, float]:
    """(events, seconds) from the floor client's output."""
    match = re.search(r"events (\d+) seconds ([\d.]+)", output)
    if match is None:
        raise SystemExit(f"error: the floor client printed no result:\n{output}")
    return int(match.group(1)), float(match.group(2))
