"""dbscale: database benchmarking with honest statistics.

The measuring happens in the native core (`dbscale._core`, Rust); this package is the command
line, the configuration, the targets, the results and their statistics
(`dbscale.load_results(dir)` gives them as pandas DataFrames).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbscale.results.analysis import Results

    __version__: str


@cache
def _version() -> str:
    # importlib.metadata costs a good part of the start-up, so only the commands that print or
    # record the version pay for it (through the module __getattr__ below).
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("dbscale")
    except PackageNotFoundError:
        return "0.1.0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'dbscale' has no attribute {name!r}")


def load_results(directory: Any) -> Results:
    """A results directory as pandas DataFrames: `.runs`, `.intervals`, `.summary`."""
    from dbscale.results.analysis import load_results as load

    return load(directory)


__all__ = ["__version__", "load_results"]
