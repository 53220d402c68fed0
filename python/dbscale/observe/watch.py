"""Observation for one `dbscale run` invocation: host facts gathered once and written to the
results directory's `host.json`, and a `RunWatch` around each run that the runner feeds and asks
for the record's `observe` section. Observation never fails a run: what it cannot see is noted
in the record instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from dbscale import __version__, core
from dbscale.core.config import RunConfig
from dbscale.core.result import Interval, RunResult
from dbscale.observe.host import client_host_facts, write_host_file
from dbscale.observe.host_facts import HostSummary
from dbscale.observe.observer import ObserveOptions, RunObserver
from dbscale.observe.section import ObservedServer, ObserveSection, ServerFacts
from dbscale.redaction import redact_url


class Notes(Protocol):
    """Where live warnings go (the runner's progress display)."""

    def note(self, message: str) -> None: ...


class RunWatch:
    """One run's observation, started on construction. If observing cannot even start, the
    run goes on and its record says why."""

    def __init__(
        self, study: StudyObserver, config: RunConfig, server_url: str | None = None
    ) -> None:
        self._study = study
        self._observer: RunObserver | None = None
        self._failure: str | None = None
        try:
            self._observer = RunObserver(
                config, host=study.host, options=study.options, server_url=server_url
            )
            self._observer.start()
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        self._failure = f"observation failed: {type(exc).__name__}: {exc}"
        if self._observer is not None:
            self._observer.close()
            self._observer = None

    @property
    def wants_statement_window(self) -> bool:
        """True when the run should wait, connected, for `open_statement_window`."""
        return self._observer is not None and self._observer.statements is not None

    def open_statement_window(self) -> None:
        """The statement figures' first snapshot; the measured window opens right after."""
        if self._observer is not None:
            try:
                self._observer.open_statement_window()
            except Exception as exc:
                self._fail(exc)

    def update(self, intervals: Sequence[Interval], notes: Notes) -> None:
        """Each poll's intervals; shows any live warning (client saturated) once."""
        if self._observer is None:
            return
        self._observer.intervals(intervals)
        for message in self._observer.take_notes():
            notes.note(message)

    def finish(self, native: RunResult) -> ObserveSection:
        """The record's `observe` section; a failure here is noted, never fatal to the run."""
        if self._observer is not None:
            observer = self._observer
            try:
                section = observer.finish(native)
                self._study.learn_server(observer.config.target.url, section.server)
                return section
            except Exception as exc:  # the run's measurement matters more than its context
                self._fail(exc)
        return ObserveSection(version=1, notes=[self._failure or "not observed"])

    def close(self) -> None:
        if self._observer is not None:
            self._observer.close()


class StudyObserver:
    """Host facts once per results directory; a `RunWatch` per run."""

    def __init__(self, results_dir: Path, *, options: ObserveOptions | None = None) -> None:
        self.results_dir = results_dir
        self.options = options or ObserveOptions()
        self.host = client_host_facts()
        self.host.dbscale_version = __version__
        with contextlib.suppress(Exception):  # the facts do not need the native module
            self.host.dbscale_core_version = core.version()
        self._servers: dict[str, ServerFacts] = {}  # by target URL (no password)

    def watch(self, config: RunConfig, server_url: str | None = None) -> RunWatch:
        """Watches a run; `server_url`: the server behind the run's pooler, when it has one."""
        return RunWatch(self, config, server_url)

    def learn_server(self, url: str, server: ObservedServer) -> None:
        """A target's first run tells what its server is; host.json is (re)written with it."""
        key = redact_url(url)
        if key in self._servers:
            return
        self._servers[key] = server.facts()
        self.write()

    def write(self) -> Path:
        return write_host_file(self.results_dir, self.host, self._servers)

    def summary_host(self) -> HostSummary:
        """The host facts summary.json carries besides its rows."""
        return self.host.summary()
