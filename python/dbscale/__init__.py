"""dbscale: database benchmarking with honest statistics.

The measuring happens in the native core (`dbscale._core`, Rust); this package is the command
line, the configuration, the targets, the results and their statistics
(`dbscale.load_results(dir)` gives them as pandas DataFrames).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbscale.analysis import Results


def _version() -> str:
    try:
        return _dist_version("dbscale")
    except PackageNotFoundError:
        return "0.1.0+unknown"


__version__ = _version()


def load_results(directory: Any) -> Results:
    """A results directory as pandas DataFrames: `.runs`, `.intervals`, `.summary`."""
    from dbscale.analysis import load_results as load

    return load(directory)


__all__ = ["__version__", "load_results"]
