"""How one run is cut into workers' shares, exactly: integer quantities (clients, threads, TPC-C's
shared connections) are dealt so the shares add up to the total and differ by at most one; each
worker's clients are a contiguous block of the run's client ids, so TPC-C's terminals and
sysbench's ids are the ones one machine would have used; an open-model rate follows the clients
(a worker's rate is the total times its share of the clients, as pgbench gives each thread its
clients' share); each worker's seed is derived from the run's, so the run is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbscale.core.config import RunConfig, WorkerShare
from dbscale.errors import ConfigError

MASK64 = (1 << 64) - 1


def split_evenly(total: int, parts: int) -> list[int]:
    """`total` dealt over `parts`: the first `total % parts` get one more; the sum is `total`."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def worker_seed(seed: int, worker: int) -> int:
    """A 64-bit seed for worker `worker` from the run's (SplitMix64 of the pair): distinct per
    worker, the same on every repetition of the same run."""
    z = (seed + 0x9E3779B97F4A7C15 * (worker + 1)) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


@dataclass(frozen=True)
class Share:
    """One worker's part: its index, its clients' first id and count, and its config."""

    worker: int
    first_client: int
    clients: int
    config: RunConfig


def split_run(config: RunConfig, workers: int, seed: int) -> list[Share]:
    """The run `config` as `workers` shares. Refused when a worker would have no client."""
    if workers < 1:
        raise ConfigError("--workers: must be at least 1")
    if workers > config.clients:
        raise ConfigError(
            f"--workers {workers} is more than the run's {config.clients} clients: a worker "
            "without clients would only add noise",
            f"use at most {config.clients} workers, or more clients",
        )
    clients = split_evenly(config.clients, workers)
    threads = split_evenly(config.threads, workers) if config.threads is not None else None
    connections = _shared_connections(config)
    connection_shares = split_evenly(connections, workers) if connections else None
    shares: list[Share] = []
    first = 0
    for i, count in enumerate(clients):
        params = dict(config.workload.params)
        if connection_shares is not None:
            params["connections"] = max(connection_shares[i], 1)
        rate = config.rate_tps * count / config.clients if config.rate_tps is not None else None
        worker_config = config.model_copy(
            update={
                "clients": count,
                "threads": min(max(threads[i], 1), count) if threads is not None else None,
                "rate_tps": rate,
                "seed": worker_seed(seed, i),
                "workload": config.workload.model_copy(update={"params": params}),
                "share": WorkerShare(first_client=first, total_clients=config.clients),
            }
        )
        shares.append(Share(i, first, count, worker_config))
        first += count
    return shares


def _shared_connections(config: RunConfig) -> int:
    """TPC-C's `connections` (fewer connections than clients, shared): split like clients."""
    value = config.workload.params.get("connections")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
