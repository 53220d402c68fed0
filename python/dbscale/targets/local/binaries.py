"""Where PostgreSQL's server programs (initdb, pg_ctl, postgres, psql) are: Debian's versioned
directories, the PATH, `pg_config --bindir`, or the `pgserver` wheel from PyPI as a last resort.
"""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dbscale.errors import LocalServerError

REQUIRED = ("initdb", "pg_ctl", "postgres", "psql")
DEBIAN_ROOT = Path("/usr/lib/postgresql")


@dataclass(frozen=True)
class PostgresBinaries:
    bin_dir: Path
    source: str

    def tool(self, name: str) -> Path:
        return self.bin_dir / name

    def major_version(self) -> int:
        out = subprocess.run(
            [str(self.tool("postgres")), "--version"], capture_output=True, text=True, check=False
        ).stdout
        match = re.search(r"(\d+)(?:\.\d+)?", out)
        return int(match.group(1)) if match else 0


def _complete(directory: Path) -> bool:
    return all((directory / name).is_file() for name in REQUIRED)


def _debian_dirs() -> list[Path]:
    if not DEBIAN_ROOT.is_dir():
        return []
    versions = []
    for child in DEBIAN_ROOT.iterdir():
        if child.name.isdigit() or re.fullmatch(r"\d+\.\d+", child.name):
            versions.append((float(child.name), child / "bin"))
    return [path for _, path in sorted(versions, reverse=True)]


def _pg_config_dir() -> list[Path]:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        return []
    done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
    return [Path(done.stdout.strip())] if done.returncode == 0 and done.stdout.strip() else []


def _path_dirs() -> list[Path]:
    found = shutil.which("initdb")
    return [Path(found).resolve().parent] if found else []


def _pgserver_dir() -> list[Path]:
    """The binaries inside the `pgserver` wheel (`pip install 'dbscale[pgserver]'`)."""
    for module_name in ("pgserver._commands", "pgserver.postgres_server"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        path = getattr(module, "POSTGRES_BIN_PATH", None)
        if path is not None:
            return [Path(path)]
    try:
        package = importlib.import_module("pgserver")
    except ImportError:
        return []
    package_file = getattr(package, "__file__", None)
    return [Path(package_file).parent / "pginstall" / "bin"] if package_file else []


def find_postgres_binaries() -> PostgresBinaries:
    """The newest complete set of server programs found, or `LocalServerError` with a hint."""
    for source, candidates in (
        ("debian", _debian_dirs()),
        ("PATH", _path_dirs()),
        ("pg_config", _pg_config_dir()),
        ("pgserver", _pgserver_dir()),
    ):
        for directory in candidates:
            if _complete(directory):
                return PostgresBinaries(bin_dir=directory, source=source)
    raise LocalServerError(
        "no PostgreSQL server programs (initdb, pg_ctl, postgres, psql) were found",
        "install PostgreSQL (e.g. `apt-get install postgresql`), or `pip install "
        "'dbscale[pgserver]'`, or benchmark a running server with --target URL",
    )
