"""Type stubs for the private native module built from crates/dbscale-py.

Everything crosses the boundary as JSON text: the resolved run configuration goes in once, results
come out once, per-second intervals are polled. See docs/results.md for the shapes.
"""

class CoreError(Exception):
    """Raised by every native call. ``args == (kind, message, hint)``.

    kind is one of: "config", "script", "connect_unreachable", "connect_auth", "connect_database",
    "connect_tls", "connect_unavailable", "connect_invalid", "not_prepared", "sql", "histogram", "internal".
    """

class RunHandle:
    """A run going on in native threads. The GIL is released while it runs."""

    def poll(self) -> str:
        """JSON list of the per-second intervals completed since the last poll."""
    def wait(self, timeout_s: float) -> bool:
        """Blocks up to timeout_s; True once the run has finished (or failed)."""
    def since_start(self) -> float | None:
        """Seconds since the measured start (negative during the ramp); None until it is fixed."""
    def ready(self) -> bool:
        """A scaled-out run's worker: True once connected and waiting for go()."""
    def go(self, delay_s: float) -> None:
        """A scaled-out run's worker starts delay_s from now."""
    def cancel(self) -> None:
        """Asks the run to stop at the next transaction boundary; result() then holds what ran."""
    def result(self) -> str:
        """Blocks until the run ends; the run result as JSON. Raises CoreError if it failed to start."""

class Session:
    """One connection for queries outside the measured loop (server statistics, checks)."""

    def __init__(self, config_json: str, timeout_s: float | None = None) -> None: ...
    def query(self, sql: str) -> str:
        """JSON list of rows; each row a list of text values or null."""
    def close(self) -> None: ...

def version() -> str: ...
def contract() -> str: ...
def workloads() -> str:
    """JSON catalog: {name: {"description": str, "params": {key: {"default": any, "doc": str}}}}."""

def start_run(config_json: str) -> RunHandle: ...
def check_workload(workload_json: str) -> None:
    """Builds the workload from its configuration (parses scripts); raises CoreError if it cannot
    run: an unknown name or parameter, a script that does not parse."""

def prepare(config_json: str) -> str:
    """Loads the workload's data; JSON summary {"steps": [{"name", "seconds"}], "rows": int}."""

def cleanup(config_json: str) -> str:
    """Drops the workload's tables; JSON summary like prepare's."""

def probe(config_json: str) -> str:
    """Connects once: JSON {"server_version", "tls", "connect_ms", "dialect"}."""

def check(config_json: str, timeout_s: float | None = None) -> str:
    """The workload's consistency conditions on the target's data: JSON {"warehouses", "ok",
    "conditions": [{"id", "description", "status", "violations", "examples", "note",
    "seconds"}], "seconds"}."""

def histogram_figures(blobs: list[str], quantiles: list[float]) -> str:
    """Merges stored histograms (base64 HDR V2 deflate) exactly: JSON {"count", "min", "mean",
    "stddev", "max", "values"} in milliseconds, "values" at `quantiles` (null when empty)."""

def histogram_counts_above(blobs: list[str], limits_ms: list[float]) -> str:
    """Each stored histogram's count and its counts over `limits_ms`: JSON [{"count",
    "above"}]."""

def merge_histograms(blobs: list[str]) -> str:
    """Stored histograms merged exactly into one, base64 HDR V2 deflate."""

def merge_worker_results(config_json: str, results: list[str]) -> str:
    """One result from a scaled-out run's worker results (JSON each), as JSON."""

def micro_cpu(config_json: str) -> str:
    """The CPU micro-benchmark: JSON {"threads", "seconds"} in; JSON {"threads", "iterations",
    "seconds", "iterations_per_s", "per_thread"} out."""

class NetServer:
    """A `micro net` server on bind:port (0: a free port) until `stop()`."""

    def __init__(self, bind: str, port: int) -> None: ...
    def addr(self) -> str: ...
    def stop(self) -> None: ...

def micro_net_rr(addr: str, seconds: float) -> str:
    """One-byte request/response for `seconds`: JSON figures (latencies in microseconds)."""

def micro_net_streams(addr: str, streams: int, seconds: float, buffer_bytes: int) -> str:
    """`streams` parallel streams for `seconds`: JSON with the half-second series in Gbit/s."""

def pick_stream_count(
    history: list[tuple[int, float]], threshold_gbps: float, cap: int
) -> int | None:
    """The report's stream-count search on (streams, Gbit/s) steps: the count, or None."""
