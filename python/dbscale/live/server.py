"""The HTTP servers of `--metrics-addr` and `--web`: `/metrics` in OpenMetrics or Prometheus text
(as the scraper's Accept header asks, prometheus_client's encoders) and, with `--web`, the live
page (`/`, `/live.json`, the charting library at `/vega.js`, the study's report once written),
each from a thread of its own for the whole study, on a socket bound before the study starts.
After the last run they stay up for the linger (so the last scrape sees the final figures), or
until Ctrl-C. Both addresses may be one: then one server answers all."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from dbscale.live.address import ListenAddress, bind, parse_address
from dbscale.live.exposition import StudyCollector
from dbscale.live.figures import StudyFigures
from dbscale.live.page import live_state, page_html

FOREVER = float("inf")
TEXT = "text/plain; charset=utf-8"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        served = self.server
        if path == "/metrics":
            encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
            self._send(200, content_type, encoder(served.registry))
        elif path == "/favicon.ico":
            self._send(204, TEXT, b"")  # no icon, and no error in the browser's console
        elif served.bundle is None:
            self._not_page(path)
        elif path in ("/", "/index.html"):
            body = page_html(served.figures.state.name).encode()
            self._send(200, "text/html; charset=utf-8", body)
        elif path == "/live.json":
            body = json.dumps(live_state(served.figures), allow_nan=False).encode()
            self._send(200, "application/json", body)
        elif path == "/vega.js":
            self._send(200, "text/javascript; charset=utf-8", served.library())
        elif path == "/report.html":
            report = served.current_report()
            if report is not None:
                self._send(200, "text/html; charset=utf-8", report.read_bytes())
            else:
                self._send(404, TEXT, b"no run is kept yet: the report has nothing to show\n")
        else:
            self._send(404, TEXT, b"not found: the page is at /, the metrics at /metrics\n")

    def _not_page(self, path: str) -> None:
        if path == "/":
            text = f"dbscale study {self.server.figures.state.name}: its figures at /metrics\n"
            self._send(200, TEXT, text.encode())
        else:
            self._send(404, TEXT, b"not found: try /metrics\n")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the study's console is the user's; requests are not news


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, sock: socket.socket, figures: StudyFigures, page: PageSources | None
    ) -> None:
        super().__init__(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.figures = figures
        self.bundle = page.bundle if page is not None else None
        self.draw_report = page.report if page is not None else None
        self._report_lock = threading.Lock()
        self._report_of: int | None = None  # the runs.jsonl size the report was drawn from
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(StudyCollector(figures))
        self._library: bytes | None = None
        self._library_lock = threading.Lock()

    def current_report(self) -> Path | None:
        """The study's report: the one written at its end, or, while it runs, drawn on request
        from the runs kept so far (again only when runs.jsonl has grown)."""
        results = Path(self.figures.state.results)
        runs, report = results / "runs.jsonl", results / "report.html"
        with self._report_lock:
            size = runs.stat().st_size if runs.is_file() else 0
            ended = self.figures.state.ended
            if size and not ended and size != self._report_of and self.draw_report is not None:
                self.draw_report()
                self._report_of = size
            return report if size and report.is_file() else None

    def library(self) -> bytes:
        """The charting library, built on first use (seconds) and kept."""
        with self._library_lock:
            if self._library is None and self.bundle is not None:
                self._library = self.bundle().encode()
            return self._library or b""


@dataclass(frozen=True)
class PageSources:
    """What the live page draws with: the charting library's text, and the study's report
    written into its results directory (both built by the report stage, handed in)."""

    bundle: Callable[[], str]
    report: Callable[[], object]


class LiveServer:
    """One address's server, in its own thread until closed."""

    def __init__(
        self,
        sock: socket.socket,
        address: ListenAddress,
        figures: StudyFigures,
        page: PageSources | None,
    ) -> None:
        self.address = address
        self._server = _Server(sock, figures, page)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="dbscale-live", daemon=True)  # fmt: skip
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class LiveEndpoints:
    """The study's endpoints: metrics, the page, or both (one server when one address)."""

    def __init__(self, figures: StudyFigures) -> None:
        self.figures = figures
        self.metrics_url: str | None = None
        self.page_url: str | None = None
        self.servers: list[LiveServer] = []

    @property
    def loopback_only(self) -> bool:
        return all(server.address.loopback for server in self.servers)

    def close(self, linger_s: float = 0.0) -> None:
        """Marks the study ended, serves on for `linger_s` (Ctrl-C cuts it short), then stops."""
        self.figures.end()
        try:
            if linger_s == FOREVER:
                while True:
                    time.sleep(3600)
            elif linger_s > 0:
                time.sleep(linger_s)
        except KeyboardInterrupt:
            pass
        finally:
            for server in self.servers:
                server.stop()


def serve_study(
    metrics: str | None,
    web: str | None,
    figures: StudyFigures,
    page: PageSources,
) -> LiveEndpoints:
    """The endpoints a plan's `live:` asks for, bound now (a ConfigError when one cannot be)."""
    endpoints = LiveEndpoints(figures)
    metrics_at = parse_address(metrics) if metrics is not None else None
    web_at = parse_address(web, "--web") if web is not None else None
    sockets: list[tuple[socket.socket, ListenAddress, PageSources | None]] = []
    try:
        if web_at is not None:
            sockets.append((bind(web_at, "--web"), web_at, page))
            endpoints.page_url = f"{web_at.url}/"
        if metrics_at is not None and metrics_at != web_at:
            sockets.append((bind(metrics_at), metrics_at, None))
        served_at = metrics_at or web_at  # the page's server answers /metrics too
        if served_at is not None:
            endpoints.metrics_url = f"{served_at.url}/metrics"
    except BaseException:
        for sock, _, _ in sockets:
            sock.close()
        raise
    endpoints.servers = [LiveServer(sock, at, figures, page) for sock, at, page in sockets]
    return endpoints
