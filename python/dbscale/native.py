"""Access to the native module `dbscale._core`, imported lazily so everything that does not
measure (option parsing, targets, results) works without it, and a missing build is one clear
error rather than an ImportError traceback.
"""

from __future__ import annotations

import importlib
import json
from types import ModuleType
from typing import Any

from dbscale.errors import DbscaleError, InternalError, NativeModuleMissingError, from_core


def load_core() -> ModuleType:
    """The native module (see `_core.pyi`), or `NativeModuleMissingError`."""
    try:
        return importlib.import_module("dbscale._core")
    except ImportError as exc:
        raise NativeModuleMissingError(
            f"the native module dbscale._core is not built ({exc})"
        ) from None


def call_json(name: str, *args: Any) -> Any:
    """Calls a native function returning JSON text; native errors become `DbscaleError`s."""
    fn = getattr(load_core(), name)
    try:
        text = fn(*args)
    except Exception as exc:
        raise translate(exc) from None
    return parse_json(text, name)


def parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise InternalError(f"the native {what} returned malformed JSON: {exc}") from None


def translate(exc: BaseException) -> BaseException:
    """A native `CoreError` mapped into the tree; any other exception is returned unchanged."""
    if isinstance(exc, DbscaleError):
        return exc
    module = load_core()
    core_error = getattr(module, "CoreError", None)
    if core_error is not None and isinstance(exc, core_error):
        return from_core(exc)
    return exc
