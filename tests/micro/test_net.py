"""`dbscale micro net` on loopback: request/response figures, the stream search ending at a
count the rule picks, a measured period with it, and the refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from dbscale import core
from dbscale.cli.app import run_cli
from dbscale.micro.net import address, measure
from tests.conftest import REPO


@pytest.fixture
def server() -> Iterator[str]:
    running = core.NetServer("127.0.0.1", 0)
    try:
        yield running.addr
    finally:
        running.stop()


def test_request_response_then_searched_streams(server: str) -> None:
    result = measure(server, seconds=0.5, streams=None, step_s=0.5, buffer_bytes=1 << 20).record()
    rr = result["request_response"]
    assert isinstance(rr, dict) and rr["transactions"] > 100
    assert rr["min_us"] <= rr["p50_us"] <= rr["p90_us"] <= rr["p99_us"] <= rr["max_us"]
    search = result["search"]
    assert isinstance(search, list) and [s["streams"] for s in search][:2] == [1, 3]
    measured = result["streams"]
    assert isinstance(measured, dict)
    history = [(s["streams"], s["mean_gbps"]) for s in search]
    cap = 3 * len(os.sched_getaffinity(0))
    assert measured["streams"] == core.pick_stream_count(history, 0.35, cap)
    assert len(measured["series_gbps"]) == 1 and measured["mean_gbps"] > 0


def test_a_given_stream_count_skips_the_search(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    host, port = server.rsplit(":", 1)
    argv = ["micro", "net", "--connect", host, "--port", port, "--seconds", "1", "--streams", "2",
            "--json"]  # fmt: skip
    assert run_cli(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["search"] == [] and result["streams"]["streams"] == 2
    assert len(result["streams"]["series_gbps"]) == 2


def test_refusals_and_addresses() -> None:
    assert run_cli(["micro", "net"]) == 2
    assert run_cli(["micro", "net", "--serve", "--connect", "h"]) == 2
    assert run_cli(["micro", "net", "--connect", "127.0.0.1", "--streams", "0"]) == 2
    assert run_cli(["micro", "net", "--connect", "127.0.0.1", "--port", "1", "--seconds",
                    "0.2"]) == 3  # fmt: skip
    assert address("db1", 12865) == "db1:12865"
    assert address("db1:99", 12865) == "db1:99"
    assert address("::1", 5) == "[::1]:5"


def test_the_server_stops_on_sigterm() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "micro", "net", "--serve", "--port", "0"],
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    assert "listening on 127.0.0.1:" in stderr and "stopping the micro net server" in stderr


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_silent_server_cannot_hold_the_client_past_a_signal(sig: int, code: int) -> None:
    # A port that accepts and never answers: the client waits for its first response (up to
    # its 10 s deadline), and a signal still ends it at once, with one error line.
    import socket

    silent = socket.create_server(("127.0.0.1", 0))
    port = silent.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "micro", "net", "--connect", "127.0.0.1", "--port",
         str(port), "--seconds", "30"],
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        held, _ = silent.accept()  # the client connected: it now waits on a silent server
        time.sleep(1.0)
        signalled = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=10)
        took = time.monotonic() - signalled
        held.close()
    finally:
        proc.kill()
        silent.close()
    assert proc.returncode == code, stderr
    assert took < 2.0, took
    assert "Traceback" not in stderr and stderr.count("error: ") == 1, stderr
