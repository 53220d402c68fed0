"""A study's targets, each entered when a step first needs it and left when the study is done
or enters another target of its group (another size of the same server):

    enter: setup hook -> start the local server in its shape (and its private PgBouncer when
           it has one) -> ready hook -> wait until it accepts connections -> record version,
           settings and facts in targets/<name>.json
    leave: stop the pooler and the local server -> teardown hook

A target that fails on the way in (a hook fails or hangs, the server never answers) is left as
cleanly as it can be and refused from then on with `TargetFailedError`; the study skips its
points and goes on with the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path

from dbscale.errors import DbscaleError, TargetError
from dbscale.modes import Dialect
from dbscale.redaction import redact_url
from dbscale.targets import OpenTarget
from dbscale.targets.cluster import ClusterShape, LocalCluster, make_cluster
from dbscale.targets.cluster.record import ClusterRecord, node_records
from dbscale.targets.facts import (
    ServerRecord,
    TargetRecord,
    key_settings,
    server_settings,
    wait_accepting,
    write_target_record,
)
from dbscale.targets.hooks import HookError, HookResult, hook_env, run_hook
from dbscale.targets.local.embedded import HOME_VARIABLE, default_base_dir
from dbscale.targets.local.evidence import LocalEvidence
from dbscale.targets.local.instance import LocalInstance, LocalShape, local_dir
from dbscale.targets.local.pgbouncer import POOL_MODE, LocalPgBouncer
from dbscale.targets.local.postgres import LocalPostgres
from dbscale.targets.spec import TargetEntry, target_info
from dbscale.targets.url import EMBEDDED
from dbscale.targets.variables import target_variables
from dbscale.values import iso_utc, utc_now


class TargetFailedError(TargetError):
    """A target could not be entered; its points are skipped. `cause` is the error itself."""

    def __init__(
        self, message: str, hint: str | None = None, cause: DbscaleError | None = None
    ) -> None:
        super().__init__(message, hint)
        self.cause = cause

    def as_cause(self) -> DbscaleError:
        """The error as its own kind (exit code and all), with this message naming the target."""
        if self.cause is None:
            return self
        return type(self.cause)(self.message, self.hint)


@dataclass
class _Active:
    target: TargetEntry
    opened: OpenTarget
    instance: LocalInstance | None
    variables: dict[str, str]
    record: TargetRecord  # targets/<name>.json
    pooler: LocalPgBouncer | None = None
    cluster: LocalCluster | None = None


class TargetPool(Mapping[str, OpenTarget]):
    """`pool[name]` is the opened target, entered on first use. Use as a context manager: every
    target still entered is left at the end."""

    def __init__(
        self,
        targets: Sequence[TargetEntry],
        results_dir: Path,
        *,
        env: Mapping[str, str],
        note: Callable[[str], None] = lambda _text: None,
        home: Path | None = None,
    ) -> None:
        self.targets = {t.name: t for t in targets}
        self.results_dir, self.env, self.note = results_dir, dict(env), note
        self.home = home or Path.home()
        self.failed: dict[str, TargetFailedError] = {}
        self.errors: list[DbscaleError] = []  # every failure, teardowns included, in order
        self._active: dict[str, _Active] = {}

    # -- Mapping -----------------------------------------------------------------------------

    def __getitem__(self, name: str) -> OpenTarget:
        if name in self.failed:
            raise self.failed[name]
        active = self._active.get(name)
        if active is not None:
            return active.opened
        target = self.targets[name]
        group = target.exclusive_group
        if group is not None:
            for other in [n for n, a in self._active.items() if a.target.exclusive_group == group]:
                self.leave(other)
        try:
            active = self._enter(target)
        except DbscaleError as exc:
            prefix = "" if exc.message.startswith(f"target {name}") else f"target {name}: "
            failed = TargetFailedError(prefix + exc.message, exc.hint, exc)
            self.failed[name] = failed
            self.errors.append(failed)
            raise failed from None
        self._active[name] = active
        return active.opened

    def __contains__(self, name: object) -> bool:  # without entering the target
        return name in self.targets

    def __iter__(self) -> Iterator[str]:
        return iter(self.targets)

    def __len__(self) -> int:
        return len(self.targets)

    def __enter__(self) -> TargetPool:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        # Every target is left, whatever fails on the way; a failure here (a full disk that
        # cannot take a target's record) is raised only when nothing else is: it must not hide
        # the error that ended the study.
        problems = self.leave_all()
        if problems and exc_type is None:
            raise problems[0]
        for problem in problems:
            self.note(f"warning: {problem.message}")

    # -- entering and leaving -----------------------------------------------------------------

    def _enter(self, target: TargetEntry) -> _Active:
        variables = {**target_variables(target), "results_dir": str(self.results_dir.absolute())}
        record = TargetRecord(
            name=target.name,
            url="local" if target.is_local else redact_url(target.url),
            info=target_info(target),
            prices=target.prices.model_dump(mode="json") if target.prices else None,
            entered_at=iso_utc(utc_now()),
            hooks=[],
        )
        active = _Active(target, OpenTarget(url=target.url), None, variables, record)
        setup_started = False
        try:
            if self._hook_defined(target, "setup"):
                setup_started = True
                self._hook(active, "setup")
            if target.is_local_cluster:
                active.cluster = self._local_cluster(target)
                active.cluster.start()
                record.cluster = ClusterRecord(
                    engine=active.cluster.engine,
                    dir=str(active.cluster.base_dir),
                    nodes=node_records(active.cluster),
                    confinement="; ".join(
                        n
                        for n in (active.cluster.confinement_note, active.cluster.memory_note)
                        if n
                    )
                    or None,
                )
                urls = active.cluster.urls
                active.opened = OpenTarget(
                    url=urls[0], more_urls=tuple(urls[1:]), cluster=active.cluster
                )
                notes = [
                    active.cluster.confinement_note,
                    active.cluster.reaped_note,
                    active.cluster.rebuilt_note,
                ]
                self.note(f"target {target.name}: local {active.cluster.title} cluster of "
                          f"{len(urls)} node{'s' if len(urls) != 1 else ''} in "
                          f"{active.cluster.base_dir}"
                          + "".join(f", {n}" for n in notes if n))  # fmt: skip
            elif target.is_local:
                active.instance = self._local_instance(target)
                evidence = active.instance.start()
                record.local = evidence
                server = active.instance.server
                active.opened = OpenTarget(url=server.url, server=server)
                self._note_local(target, evidence)
                if server.shared:
                    self.note(f"target {target.name}: the {server.title} server in "
                              f"{server.base_dir} was already running (another dbscale, or its "
                              "owner, uses it too): this command shares it, and whatever else "
                              f"runs on it loads it; ${HOME_VARIABLE} gives a command servers "
                              "of its own")  # fmt: skip
                if server.reaped_from is not None:
                    self.note(f"target {target.name}: stopped the {server.title} server left "
                              f"running by dbscale pid {server.reaped_from}, which ended without "
                              "stopping it, and started it anew")  # fmt: skip
                if target.pooler == "pgbouncer" and isinstance(server, LocalPostgres):
                    active.pooler = LocalPgBouncer(server, server.base_dir / "pgbouncer")
                    record.pooler = active.pooler.start()
                    active.opened = replace(active.opened, pooled_url=active.pooler.url)
                    self.note(f"target {target.name}: PgBouncer ({POOL_MODE} pooling) on port "
                              f"{active.pooler.port} for the pooling: on points")  # fmt: skip
            self._hook(active, "ready")
            # Without hooks a target should be up already: one attempt, its error as it is.
            timeout_s = target.hooks.connect_timeout if target.hooks else 0.0
            probe = wait_accepting(active.opened.url, timeout_s, target=target.name)
            dialect = Dialect(probe.dialect)
            settings = server_settings(active.opened.url, dialect)
            record.server = ServerRecord(
                version=probe.server_version,
                dialect=dialect,
                tls=probe.tls,
                key_settings=key_settings(dialect, settings),
                settings=settings,
            )
            write_target_record(self.results_dir, target.name, record)
        except BaseException as exc:
            self._abandon(active, setup_started)
            record.error = exc.message if isinstance(exc, DbscaleError) else repr(exc)
            with suppress(OSError):
                write_target_record(self.results_dir, target.name, record)
            raise
        return active

    def leave(self, name: str) -> None:
        """Stops the target's local server and runs its teardown hook."""
        active = self._active.pop(name, None)
        if active is None:
            return
        self._stop_and_tear_down(active, teardown=True)
        active.record.left_at = iso_utc(utc_now())
        write_target_record(self.results_dir, name, active.record)

    def leave_all(self) -> list[DbscaleError]:
        """Leaves every target still entered; what went wrong, target by target."""
        problems: list[DbscaleError] = []
        for name in list(self._active):
            try:
                self.leave(name)
            except DbscaleError as exc:
                problems.append(exc)
        return problems

    def final_error(self) -> DbscaleError | None:
        """What the command should end with: None, the one problem as itself, or a summary."""
        if not self.errors:
            return None
        if len(self.errors) == 1:
            only = self.errors[0]
            return only.as_cause() if isinstance(only, TargetFailedError) else only
        return TargetError(
            f"{len(self.errors)} target problems: "
            + "; ".join(e.message.split(":", 1)[0] for e in self.errors),
            "the messages above (and hooks/*.log in the results directory) say what failed",
        )

    def _abandon(self, active: _Active, setup_started: bool) -> None:
        """After a failed entry: stop what started, and tear down what setup began."""
        self._stop_and_tear_down(active, teardown=setup_started)

    def _stop_and_tear_down(self, active: _Active, *, teardown: bool) -> None:
        """Problems here are noted and remembered, never raised: the other targets still
        have to be left."""
        steps = [active.pooler.stop] if active.pooler is not None else []
        if active.instance is not None:
            steps.append(active.instance.stop)
        if active.cluster is not None:
            steps.append(active.cluster.stop)
        if teardown:
            steps.append(lambda: self._hook(active, "teardown"))
        for step in steps:
            try:
                step()
            except DbscaleError as exc:
                self.errors.append(exc)
                self.note(f"error: {exc.message}")

    def _hook_defined(self, target: TargetEntry, name: str) -> bool:
        return target.hooks is not None and target.hooks.get(name) is not None

    def _hook(self, active: _Active, name: str) -> None:
        hooks = active.target.hooks
        command = hooks.get(name) if hooks is not None else None
        if hooks is None or command is None:
            return
        self.note(f"target {active.target.name}: {name} hook ...")
        try:
            result = run_hook(
                active.target.name, name, command, variables=active.variables,
                default_timeout_s=hooks.timeout, results_dir=self.results_dir,
                env=hook_env(self.env, active.target.password_env, command.run),
            )  # fmt: skip
        except HookError as exc:
            active.record.hooks.append(HookResult(hook=name, error=exc.message))
            raise
        active.record.hooks.append(result)

    def _local_instance(self, target: TargetEntry) -> LocalInstance:
        local = target.local
        if target.url.strip().lower() == EMBEDDED and (local is None or local.dir is None):
            base = default_base_dir(self.home)
        else:
            base = local_dir(local.dir if local and local.dir else target.name, self.home)
        shape = LocalShape(
            vcpus=None if target.vcpu_count is None else int(target.vcpu_count),
            memory_gib=target.memory,
            cpus=local.cpus if local else None,
            settings=dict(local.settings) if local else {},
            engine=local.engine if local else "postgresql",
        )
        return LocalInstance(base, shape, cgroup_name=target.group or target.name)

    def _local_cluster(self, target: TargetEntry) -> LocalCluster:
        local = target.local
        assert local is not None, "a local-cluster target has local settings (validated)"
        base = local_dir(local.dir or target.name, self.home)
        shape = ClusterShape(
            nodes=target.node_count,
            vcpus=None if isinstance(target.vcpus, list) else target.vcpus,
            memory_gib=target.memory,  # per node
            settings=dict(local.settings),
        )
        return make_cluster(local.engine, base, shape, name=target.group or target.name)

    def _note_local(self, target: TargetEntry, evidence: LocalEvidence) -> None:
        parts = [f"target {target.name}: local PostgreSQL in {evidence.dir}"]
        if evidence.cpus is not None:
            parts.append(f"on CPUs {evidence.cpus}")
        memory = evidence.memory
        if memory is not None:
            how = memory.enforced_by or "settings only, not enforced"
            parts.append(f"memory {memory.memory_gib:g} GiB ({how})")
        self.note(", ".join(parts))
