"""Workers as Ray actors (the optional `ray` extra, imported only here): one worker session per
actor, placed by a placement group, one worker per node by default (STRICT_SPREAD) or
`per_node` packed on each node. Ray is the transport and the placement; the splitting, barrier,
merge and failure policy are the coordinator's own. A dead actor (its process or node gone) is
`WorkerLost` naming its node; nothing is restarted (max_restarts=0).
"""

from __future__ import annotations

import math
import os
import signal
import socket
import sys
from contextlib import suppress
from typing import Any

from dbscale.errors import ConfigError, RunError, TargetError
from dbscale.scaleout.session import WorkerSession
from dbscale.scaleout.workers import Worker, WorkerLost

# How long Ray may take to find room for the workers (DBSCALE_RAY_PLACEMENT_TIMEOUT_S).
PLACEMENT_TIMEOUT_S = float(os.environ.get("DBSCALE_RAY_PLACEMENT_TIMEOUT_S", "120"))
CONNECT_TIMEOUT_S = 5.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")
INSTALL_HINT = "pip install 'dbscale[ray]' (Ray 2.52 or later, the same version on every node)"


def _ray(loopback: bool) -> Any:
    if loopback and "ray" not in sys.modules:
        # A head on 127.0.0.1 (tests, one machine) listens there only; Ray would look for it
        # at this machine's outside address unless told the cluster is this machine alone.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray, which is not installed", INSTALL_HINT) from None
    return ray


def _reachable(address: str) -> str:
    """The head's host, after checking its port answers (Ray itself would retry for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray {address}: not HOST:PORT", "e.g. --ray 10.0.0.5:6379")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            return host
    except OSError as exc:
        raise TargetError(
            f"--ray {address}: no Ray head answers there ({exc.strerror or exc})",
            "start it first: ray start --head --port 6379 (docs/scaleout.md), and open the port",
        ) from None


class _RayPending:
    def __init__(self, worker: RayWorker, ref: Any) -> None:
        self.worker, self.ref = worker, ref

    def get(self, timeout_s: float) -> Any:
        ray = self.worker.ray
        try:
            return ray.get(self.ref, timeout=timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise WorkerLost(f"{self.worker.name} did not answer in {timeout_s:g} s") from None
        except ray.exceptions.RayActorError as exc:
            raise WorkerLost(f"{self.worker.name} died ({type(exc).__name__})") from None
        except ray.exceptions.RayTaskError as exc:
            raise RunError(f"{self.worker.name}: {exc.cause}") from None


class RayWorker:
    def __init__(self, ray: Any, actor: Any, index: int) -> None:
        self.ray, self.actor, self.index = ray, actor, index
        self.name = f"worker {index + 1} (Ray actor)"

    def submit(self, call: str, *args: Any) -> _RayPending:
        return _RayPending(self, getattr(self.actor, call).remote(*args))

    def close(self) -> None:
        try:
            self.ray.kill(self.actor)
        except Exception:  # already gone: nothing to stop
            return


class RayPool:
    """Connects to the cluster at `address`, places `count` workers and starts them."""

    def __init__(self, address: str, count: int, per_node: int = 1) -> None:
        host = _reachable(address)
        ray = self.ray = _ray(host in LOOPBACK)
        from ray.util.placement_group import placement_group, remove_placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        self._remove = remove_placement_group
        term = signal.getsignal(signal.SIGTERM)  # ray.init replaces the driver's handler
        try:
            ray.init(address=address, log_to_driver=False, namespace="dbscale",
                     configure_logging=False)  # fmt: skip
            signal.signal(signal.SIGTERM, term)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise TargetError(
                f"--ray {address}: cannot join the Ray cluster ({exc})",
                "start it first (docs/scaleout.md): ray start --head on one machine, "
                "ray start --address HEAD:6379 on the others",
            ) from None
        nodes = math.ceil(count / per_node)
        bundles = [{"CPU": float(min(per_node, count - i * per_node))} for i in range(nodes)]
        strategy = "STRICT_SPREAD" if nodes > 1 else "PACK"
        cpus = [float(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive")]
        fitting = sum(1 for c in cpus if c >= bundles[0]["CPU"])
        if fitting < nodes:  # the cluster as it is cannot hold them: say so now, not after waiting
            ray.shutdown()
            raise TargetError(
                self._unplaceable(count, nodes, per_node, cpus),
                "add nodes (ray start --address ...), or pack workers with --workers-per-node",
            )
        self.group = placement_group(bundles, strategy=strategy)
        try:
            ray.get(self.group.ready(), timeout=PLACEMENT_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            cpus = [float(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes()
                    if n.get("Alive")]  # fmt: skip
            self.close()
            raise TargetError(
                self._unplaceable(count, nodes, per_node, cpus)
                + f"; the CPUs were taken for {PLACEMENT_TIMEOUT_S:g} s",
                "add nodes (ray start --address ...), or pack workers with --workers-per-node",
            ) from None
        actor_class = ray.remote(num_cpus=1, max_restarts=0)(WorkerSession)
        self.workers: list[Worker] = []
        for i in range(count):
            strategy_i = PlacementGroupSchedulingStrategy(
                placement_group=self.group, placement_group_bundle_index=i // per_node
            )
            actor = actor_class.options(scheduling_strategy=strategy_i).remote()
            self.workers.append(RayWorker(ray, actor, i))

    @staticmethod
    def _unplaceable(count: int, nodes: int, per_node: int, cpus: list[float]) -> str:
        sizes = ", ".join(f"{c:g}" for c in cpus) or "none"
        fitting = sum(1 for c in cpus if c >= min(per_node, count))
        return (
            f"--workers {count}: Ray cannot place {nodes} node(s) of {per_node} worker(s) with a "
            f"CPU each: {fitting} of the cluster's {len(cpus)} node(s) have the CPUs (CPUs per "
            f"node: {sizes})"
        )

    def close(self) -> None:
        for worker in getattr(self, "workers", []):
            worker.close()
        with suppress(Exception):  # the cluster may be gone already
            self._remove(self.group)
        self.ray.shutdown()
