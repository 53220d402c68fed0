"""The contract room: the only place Python meets the native core.

- `config`: what to run (`RunConfig` and its parts), mirroring `crates/dbscale-core/src/config.rs`;
- `result`: what ran (the native `RunResult` and its parts), mirroring `stats/result.rs`;
- `answers`: the core's answers to every other call (data summaries, checks, probes, figures);
- `native`: the calls themselves, the only importer of `dbscale._core`;
- `contract`: the core's own JSON Schema of all of it, which a test holds the models to.

Nothing here imports a stage package (plan, run, results, ...): they stand above it. The
package itself is the calls (`from dbscale import core; core.probe(...)`); the models are
imported from their modules.
"""

from dbscale.core.native import (
    NetServer,
    Row,
    Run,
    Session,
    check,
    check_workload,
    cleanup,
    family_of,
    histogram_counts_above,
    histogram_figures,
    load_core,
    merge_histograms,
    merge_worker_results,
    micro_cpu,
    micro_net_rr,
    micro_net_streams,
    pick_stream_count,
    prepare,
    probe,
    strict,
    version,
    workloads,
)

__all__ = [
    "NetServer",
    "Row",
    "Run",
    "Session",
    "check",
    "check_workload",
    "cleanup",
    "family_of",
    "histogram_counts_above",
    "histogram_figures",
    "load_core",
    "merge_histograms",
    "merge_worker_results",
    "micro_cpu",
    "micro_net_rr",
    "micro_net_streams",
    "pick_stream_count",
    "prepare",
    "probe",
    "strict",
    "version",
    "workloads",
]
