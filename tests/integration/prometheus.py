"""A real Prometheus (Debian's package) for the watching tests: its own data directory and port
on 127.0.0.1, scraping given targets every second, queried over its HTTP API."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dbscale.targets.local.server import free_port
from tests.conftest import skip_or_fail

READY_WITHIN_S = 30.0


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, expression: str, at: float | None = None) -> list[dict[str, Any]]:
        """An instant query's result vector (now, or at Unix time `at`)."""
        query = urllib.parse.urlencode({"query": expression, **({"time": at} if at else {})})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{query}", timeout=10) as answer:
            data = json.load(answer)
        assert data["status"] == "success", data
        result: list[dict[str, Any]] = data["data"]["result"]
        return result

    def query_range(self, expression: str, start: float, end: float) -> list[dict[str, Any]]:
        """A range query's result matrix, one step a second."""
        query = urllib.parse.urlencode({"query": expression, "start": start, "end": end,
                                        "step": "1s"})  # fmt: skip
        with urllib.request.urlopen(f"{self.url}/api/v1/query_range?{query}", timeout=10) as got:
            data = json.load(got)
        assert data["status"] == "success", data
        result: list[dict[str, Any]] = data["data"]["result"]
        return result

    def value(self, expression: str) -> float:
        """The one sample an instant query returns."""
        result = self.query(expression)
        assert len(result) == 1, (expression, result)
        return float(result[0]["value"][1])

    def wait_for(self, expression: str, within_s: float = 20.0) -> list[dict[str, Any]]:
        """The query's result once it is not empty."""
        deadline = time.monotonic() + within_s
        while True:
            result = self.query(expression)
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.5)


@contextmanager
def prometheus(tmp: Path, targets: list[str]) -> Iterator[Prometheus]:
    """Prometheus scraping `targets` (HOST:PORT) every second until the block ends."""
    binary = shutil.which("prometheus")
    if binary is None:
        skip_or_fail("no prometheus: `make system-deps` installs Debian's package")
        raise AssertionError("unreachable")
    config = tmp / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: dbscale\n    static_configs: [{{targets: {json.dumps(targets)}}}]\n"
    )
    port = free_port()
    log = (tmp / "prometheus.log").open("w")
    process = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_WITHIN_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None, (tmp / "prometheus.log").read_text()
            assert time.monotonic() < deadline, "prometheus was not ready in 30 s"
            time.sleep(0.2)
        yield Prometheus(url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
