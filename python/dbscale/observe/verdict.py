"""What limited a run's throughput, from the evidence observation gathered: one short verdict,
the numbers behind it, and other limits that also showed. Rules are tried in order (see
docs/observe.md); the first that holds is the verdict, later ones that hold are listed under
`also`. Thin evidence gives `unknown`, never a guess.

CPU is reasoned about in cores (CPU-seconds per second) and as shares of the whole host, because
client and server may share one machine: a host ~100% busy where the server's processes take most
of it is limited by server CPU, even though the client was busy too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dbscale.core.result import RunResult
from dbscale.observe.cluster import ClusterObservation
from dbscale.observe.evidence import Evidence, Finding
from dbscale.observe.rules import (
    CLIENT_SATURATED,
    CLIENT_THROTTLED_PCT,
    CLIENT_THROTTLED_PERIODS_PCT,
    MIN_ROWS,
    RULES,
    pct,
)
from dbscale.observe.section import Finding as AlsoFinding
from dbscale.observe.section import LimitedBy
from dbscale.observe.waits import WaitHistogram

CLIENT_WARNING = (
    "the client (load generator) was a bottleneck: this run measured dbscale, not the database"
)
# Other processes on the load generator's host: above this share of its CPUs, averaged over the
# run, the run shared its machine. On 2 cores that is 0.2 cores: more than the run-to-run noise
# of a clean run (CV 1-3% here) can hide, and enough to slow a client- or server-bound run.
CONTAMINATION_SHARE = 0.10
CLIENT_HINT = (
    "give dbscale more CPU: a bigger client machine, no CPU quota, more --threads if its workers "
    "are busy, or a machine of its own apart from the server"
)


def unknown(ev: Evidence, reason: str | None = None) -> Finding:
    if reason is None:
        idle = ""
        if ev.waits is not None and ev.waits.sessions:
            waiting = 1 - ev.waits.active / ev.waits.sessions
            idle = f"; server sessions idle (waiting for their client) {pct(waiting)} of the time"
        reason = (
            f"nothing saturated: host CPU {ev.host_busy_pct:.0f}% busy, dbscale's workers "
            f"{ev.mean('client_cpu_cores'):.2f} cores"
            + (f", server {ev.server_cores:.2f} cores" if ev.server_local else "")
            + idle
            + " — in a closed loop, throughput then follows latency × clients"
        )
    return Finding("unknown", "unknown", reason)


def judge(
    native: RunResult,
    means: Mapping[str, float],
    waits: WaitHistogram | None,
    *,
    rows: int,
    server_local: bool,
    server_vcpus: int | None,
    client_capacity_cores: float,
    host_cpus: int,
    net_speed_mbps: Mapping[str, float] | None = None,
    cluster: ClusterObservation | None = None,
) -> LimitedBy:
    """The record's `limited_by`: verdict, a one-line summary and evidence, numbers, `also`."""
    ev = Evidence(
        native, means, waits, rows, server_local, server_vcpus, client_capacity_cores,
        host_cpus, net_speed_mbps or {}, cluster,
    )  # fmt: skip
    findings: list[Finding] = []
    if rows < MIN_ROWS:
        findings.append(unknown(ev, f"too short to judge ({rows} one-second samples)"))
    else:
        for rule in RULES:
            found = rule(ev)
            if found is not None and found.verdict not in {f.verdict for f in findings}:
                findings.append(found)
    first = findings[0] if findings else unknown(ev)
    out = LimitedBy(
        verdict=first.verdict,
        summary=first.summary,
        evidence=first.evidence,
        numbers=dict(first.numbers),
        also=[AlsoFinding(verdict=f.verdict, evidence=f.evidence) for f in findings[1:]],
        client_bound=any(f.verdict == "client-cpu" for f in findings),
    )
    if out.client_bound:
        out = out.model_copy(update={"warning": CLIENT_WARNING, "hint": CLIENT_HINT})
    contamination = host_contamination(ev)
    if rows >= MIN_ROWS and contamination is not None:
        out = out.model_copy(update={"host_warning": contamination})
    return out


def host_contamination(ev: Evidence) -> str | None:
    """A sentence when other processes, or the hypervisor (steal: other virtual machines on the
    same physical CPUs), took a material share of the host's CPU."""
    share = ev.other_cores / max(ev.host_cpus, 1)
    steal = ev.mean("host_steal_pct") / 100.0
    said = []
    if share >= CONTAMINATION_SHARE:
        said.append(
            f"other processes used {ev.other_cores:.2f} of the host's {ev.host_cpus} CPUs "
            f"({pct(share)}, above {pct(CONTAMINATION_SHARE)})"
        )
    if steal >= CONTAMINATION_SHARE:
        said.append(
            f"the hypervisor took {pct(steal)} of the host's CPU time as steal (above "
            f"{pct(CONTAMINATION_SHARE)}: other virtual machines shared its physical CPUs)"
        )
    if not said:
        return None
    return " and ".join(said) + (
        " during the run: it shared its machine, so its figures may be low and noisy"
    )


def client_saturation(rows: Sequence[Mapping[str, float]], capacity_cores: float) -> str | None:
    """Live check on the last few seconds: evidence text when the client is the bottleneck."""
    if not rows:
        return None
    n = len(rows)
    throttled = sum(r.get("client_throttled_pct", 0.0) for r in rows) / n
    periods = sum(r.get("client_throttled_periods_pct", 0.0) for r in rows) / n
    cpu = sum(r.get("client_cpu_cores", 0.0) for r in rows) / n
    if throttled >= CLIENT_THROTTLED_PCT or periods >= CLIENT_THROTTLED_PERIODS_PCT:
        return f"client CPU quota: throttled in {periods:.0f}% of its CPU periods"
    if capacity_cores > 0 and cpu >= CLIENT_SATURATED * capacity_cores:
        return f"client workers used {cpu:.2f} of {capacity_cores:g} cores"
    return None
