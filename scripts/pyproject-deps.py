"""Prints the Python requirements of pyproject.toml (dependencies plus the given extras), one per
line, so `make .venv` installs them without building the native module first."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def main(extras: list[str]) -> None:
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for extra in extras:
        requirements += project.get("optional-dependencies", {}).get(extra, [])
    print("\n".join(requirements))


if __name__ == "__main__":
    main(sys.argv[1:])
