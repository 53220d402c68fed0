"""dbscale: database benchmarking with honest statistics.

The measuring happens in the native core (`dbscale._core`, Rust); this package is the command
line, the configuration, the targets and the results.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version


def _version() -> str:
    try:
        return _dist_version("dbscale")
    except PackageNotFoundError:
        return "0.1.0+unknown"


__version__ = _version()
