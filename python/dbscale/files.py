"""Writing files that must be whole or absent: results, reports, target and host records. A file
is written to a temporary name, made durable, then renamed over the old one; a failed write
removes the temporary file and becomes one `ResultsError` that says why (a full disk names
itself, with what to do) instead of a traceback. Every text written here passes through
`redaction.scrub_text` first: results are what people publish, so no password reaches them
even from a field that forgot to redact its URL.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from dbscale.errors import ResultsError
from dbscale.redaction import scrub_text


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replaces `path` with `data` whole or not at all; no temporary file is left behind."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as out:
            out.write(scrub_text(data).encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
        fsync_dir(path.parent)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise write_error(path, exc) from None


def append_durable(path: Path, line: str) -> None:
    """Appends one line (with its newline) and makes it durable before returning: fsync of the
    file, and of its directory when the file is new. A short write (a full disk) is cut off
    again, so other tools reading the file line by line never meet a torn line; one left by a
    crash mid-write is skipped by dbscale's readers and set aside by `--resume`."""
    created = not path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = memoryview((scrub_text(line) + "\n").encode("utf-8"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            before = os.lseek(fd, 0, os.SEEK_END)
            try:
                while data:
                    data = data[os.write(fd, data) :]
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):  # truncating needs no free space
                    os.ftruncate(fd, before)
                raise
        finally:
            os.close(fd)
        if created:
            fsync_dir(path.parent)
    except OSError as exc:
        raise write_error(path, exc) from None


def json_value(raw: bytes) -> object:
    """One line of a JSONL file as a value; ValueError saying why it is not one (not UTF-8
    text, not JSON, or nested deeper than a parser may follow)."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError("not a record (nested too deeply)") from None


def write_error(path: Path, exc: OSError) -> ResultsError:
    """The error for a failed write of `path`: the cause in words and what to do."""
    return ResultsError(f"cannot write {path}: {exc.strerror or exc}", space_hint(exc, path.parent))


def space_hint(exc: OSError, directory: Path) -> str:
    """What to do about a failed write: free space when the disk is full, else permissions."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"the filesystem of {directory} is full (df -h {directory}): free space, then "
            "`dbscale run ... --resume RESULTS_DIR` finishes the study; every complete run is "
            "in RESULTS_DIR/runs.jsonl"
        )
    return f"check that {directory} is writable, or choose another directory with --out"


def fsync_dir(directory: Path) -> None:
    """Makes a new or renamed entry in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


Model = TypeVar("Model", bound=BaseModel)


def read_model_file(path: Path, model: type[Model], hint: str) -> Model | None:
    """A results directory's JSON file as its model; None when there is none; a ResultsError
    with `hint` when it cannot be read or is not that model."""
    if not path.is_file():
        return None
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValueError, ValidationError) as exc:
        raise ResultsError(f"{path} cannot be read: {str(exc).splitlines()[0]}", hint) from None
