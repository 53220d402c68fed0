"""A TCP forwarder in a process of its own, for tests of a node that freezes: `python -m
tests.integration.forwarder LISTEN_PORT TARGET_HOST TARGET_PORT` relays every connection to the
target. SIGSTOP to it freezes the "node" exactly as a paused VM or a network blackhole does: its
connections stay open and new ones are still accepted by the kernel, but nothing is answered."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def _serve(listen: int, host: str, port: int) -> None:
    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    server = await asyncio.start_server(relay, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Forwarder:
    """A running forwarder process; `freeze()` and `thaw()` send SIGSTOP and SIGCONT."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.forwarder", str(self.port), target_host,
             str(target_port)],
            cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError("the forwarder did not listen")

    def freeze(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGCONT)
            self.process.kill()
        self.process.wait(10)


@contextmanager
def forwarding(target_host: str, target_port: int) -> Iterator[Forwarder]:
    forwarder = Forwarder(target_host, target_port)
    try:
        yield forwarder
    finally:
        forwarder.stop()


if __name__ == "__main__":
    listen_port, target_host, target_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    asyncio.run(_serve(listen_port, target_host, target_port))
