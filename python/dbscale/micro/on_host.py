"""Running a study's micro-benchmark where it belongs. A local target (a server dbscale started)
is measured here in its own shape: the CPU kernels on the CPUs its server may use, fio in a
directory beside its data, the network from this process to a server thread on its CPUs over
loopback. A remote target is measured on its host through `host.command` (`ssh db1 dbscale`
plus `micro ... --json`), the network from here to a `micro net --serve` started there for the
measurement. The client is measured here, unconfined.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dbscale import core
from dbscale.errors import TargetError
from dbscale.micro import cpu, disk, net
from dbscale.micro.results import RESULT_TYPES, MicroResult, MicroWhere, NetResult
from dbscale.micro.settings import MicroSettings
from dbscale.observe.procfs import ProcFs
from dbscale.observe.server_process import find_listener
from dbscale.polling import poll_until
from dbscale.targets import OpenTarget
from dbscale.targets.local.confinement import format_cpu_list, thread_affinity
from dbscale.targets.spec import HostAccess
from dbscale.targets.url import endpoint_of

Note = Callable[[str], None]
SERVER_START_TIMEOUT_S = 30.0
DISK_SUBDIR = "micro-disk"


class MicroStepError(TargetError):
    """A micro-benchmark could not run on its target's host (exit 3, as a target problem)."""


@dataclass(frozen=True)
class Place:
    """Where a micro step runs: `how` local | remote | client."""

    how: str
    cpus: tuple[int, ...] | None = None  # local: the server's CPUs
    disk_dir: Path | None = None
    host: HostAccess | None = None  # remote
    net_host: str | None = None  # remote: where its micro net server is reached

    def describe(self) -> MicroWhere:
        where = MicroWhere(how=self.how)
        if self.cpus is not None:
            where = where.model_copy(
                update={"cpus": format_cpu_list(self.cpus), "vcpus": len(self.cpus)}
            )
        if self.disk_dir is not None:
            where = where.model_copy(update={"disk_dir": str(self.disk_dir)})
        return where


def local_place(opened: OpenTarget) -> Place:
    server = opened.server
    assert server is not None, "a local target has its server"
    pid = server.running_pid()
    cpus = tuple(sorted(os.sched_getaffinity(pid))) if pid is not None else None
    return Place("local", cpus=cpus, disk_dir=server.base_dir / DISK_SUBDIR)


def loopback_place(url: str, disk_dir: str | None) -> Place:
    """A target on this machine that dbscale did not start (`postgresql://127.0.0.1/...`): the
    CPU kernels on the CPUs its server may use, fio in `disk_dir` or beside the server's data
    directory (PostgreSQL's working directory is its data directory), the network over
    loopback. Without read access to the server's process, all CPUs and a `disk_dir` to give."""
    proc = ProcFs()
    pid = find_listener(proc, endpoint_of(url))
    cpus = None
    directory = Path(disk_dir) if disk_dir else None
    if pid is not None:
        try:
            cpus = tuple(sorted(os.sched_getaffinity(pid)))
            if directory is None:
                directory = Path(f"/proc/{pid}/cwd").readlink().parent / DISK_SUBDIR
        except OSError:
            pass
    return Place("local", cpus=cpus, disk_dir=directory)


def remote_place(host: HostAccess, url: str) -> Place:
    disk_dir = Path(host.disk_dir) if host.disk_dir else None
    address = host.address or endpoint_of(url).host
    return Place("remote", disk_dir=disk_dir, host=host, net_host=address)


def client_place(settings: MicroSettings) -> Place:
    client_dir = settings.disk.client_dir if settings.disk is not None else None
    return Place("client", disk_dir=Path(client_dir) if client_dir else None)


def run_micro(kind: str, place: Place, settings: MicroSettings, note: Note) -> MicroResult:
    """The micro-benchmark's whole result, as `dbscale micro KIND --json` prints it."""
    if place.how == "remote":
        return _remote(kind, place, settings, note)
    confined = thread_affinity(place.cpus) if place.cpus is not None else nullcontext()
    if kind == "cpu":
        assert settings.cpu is not None
        with confined:
            return cpu.measure(settings.cpu.repetitions, settings.cpu.seconds, note)
    if kind == "disk":
        assert settings.disk is not None
        if place.disk_dir is None:
            raise MicroStepError(
                "micro disk: cannot tell where this machine's database keeps its data (its "
                "server's process is not readable here)",
                "set targets.NAME.host.disk_dir to a directory on the database's disk",
            )
        with confined:
            return disk.measure(place.disk_dir, jobs=settings.disk.job_names,
                                size_bytes=settings.disk.size_mib << 20,
                                runtime_s=settings.disk.runtime, note=note)  # fmt: skip
    assert settings.net is not None
    with confined:  # the server's threads on the target's CPUs; the client's are not
        server = core.NetServer("127.0.0.1", 0)
    try:
        return _net_measure(server.addr, settings, note)
    finally:
        server.stop()


def _net_measure(addr: str, settings: MicroSettings, note: Note) -> NetResult:
    assert settings.net is not None
    n = settings.net
    return net.measure(addr, seconds=n.seconds, streams=n.streams, step_s=n.step,
                       buffer_bytes=n.buffer_mib << 20, note=note)  # fmt: skip


def remote_arguments(kind: str, place: Place, settings: MicroSettings) -> list[str]:
    """`micro KIND ... --json` for the host's dbscale."""
    if kind == "cpu":
        assert settings.cpu is not None
        return ["micro", "cpu", "--json", "--repetitions", str(settings.cpu.repetitions),
                "--seconds", f"{settings.cpu.seconds:g}"]  # fmt: skip
    if kind == "disk":
        assert settings.disk is not None and place.disk_dir is not None
        return ["micro", "disk", "--json", "--dir", str(place.disk_dir),
                "--size", str(settings.disk.size_mib), "--runtime", f"{settings.disk.runtime:g}s",
                "--jobs", ",".join(settings.disk.job_names)]  # fmt: skip
    assert settings.net is not None
    stop_after = settings.net.estimate_s() * 3 + 120  # it stops by itself if we cannot stop it
    return ["micro", "net", "--serve", "--bind", "0.0.0.0", "--port", str(settings.net.port),
            "--stop-after", f"{stop_after:g}"]  # fmt: skip


def _host_command(place: Place) -> list[str]:
    assert place.host is not None and place.host.command is not None
    return shlex.split(place.host.command)


def _remote(kind: str, place: Place, settings: MicroSettings, note: Note) -> MicroResult:
    arguments = remote_arguments(kind, place, settings)
    command = _host_command(place) + arguments
    if kind == "net":
        with _remote_server(command, note):
            assert settings.net is not None and place.net_host is not None
            addr = net.address(place.net_host, settings.net.port)
            _wait_listening(addr)
            return _net_measure(addr, settings, note)
    timeout = settings.estimate_s(kind) * 3 + 120
    note(f"on the target's host: dbscale {' '.join(arguments)}")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    except FileNotFoundError:
        raise _not_a_program(command) from None
    except subprocess.TimeoutExpired:
        raise MicroStepError(
            f"micro {kind} on the target's host did not end in {timeout:g} s",
            "check that host.command reaches the host and ends",
        ) from None
    return _result_of(kind, done)


def _not_a_program(command: list[str]) -> MicroStepError:
    return MicroStepError(
        f"host.command: {command[0]!r} is not a program here",
        "host.command runs dbscale on the target's host, e.g. 'ssh db1 dbscale'",
    )


def _result_of(kind: str, done: subprocess.CompletedProcess[str]) -> MicroResult:
    last = (done.stderr.strip().splitlines() or ["(no message)"])[-1][-400:]
    if done.returncode != 0:
        raise MicroStepError(f"micro {kind} on the target's host failed (exit {done.returncode})"
                             f": {last}", "run host.command by hand to see why")  # fmt: skip
    try:
        parsed: Any = json.loads(done.stdout)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise MicroStepError(f"micro {kind} on the target's host printed no JSON result",
                             "host.command must run dbscale itself (e.g. 'ssh db1 dbscale'), "
                             "with nothing else on standard output")  # fmt: skip
    try:
        return RESULT_TYPES[kind].model_validate(parsed)
    except ValidationError as exc:
        raise MicroStepError(
            f"micro {kind} on the target's host printed a result this dbscale cannot read: "
            f"{exc.errors()[0]['msg']}",
            "run the same dbscale version on both machines",
        ) from None


@contextmanager
def _remote_server(command: list[str], note: Note) -> Iterator[None]:
    note("starting micro net --serve on the target's host")
    try:
        # Its output is not read (an unread pipe could fill and stop it): an unreachable
        # server is reported by _wait_listening.
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)  # fmt: skip
    except FileNotFoundError:
        raise _not_a_program(command) from None
    try:
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_listening(addr: str) -> None:
    host, _, port = addr.rpartition(":")
    last = ""

    def reachable() -> bool:
        nonlocal last
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=2):
                return True
        except OSError as exc:
            last = str(exc.strerror or exc)
            return False

    if not poll_until(reachable, SERVER_START_TIMEOUT_S, 0.2):
        raise MicroStepError(
            f"the micro net server on the target's host is not reachable at {addr}: {last}",
            "open the port (micro.net.port) between client and host, or set host.address to "
            "the address the client reaches",
        )
