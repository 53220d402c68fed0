"""The contract room: the only place Python meets the native core.

- `config`: what to run (`RunConfig` and its parts), mirroring `crates/dbscale-core/src/config.rs`;
- `result`: what ran (the native `RunResult` and its parts), mirroring `stats/result.rs`;
- `answers`: the core's answers to every other call (data summaries, checks, probes, figures);
- `native`: the calls themselves, the only importer of `dbscale._core`;
- `contract`: the core's own JSON Schema of all of it, which a test holds the models to.

Nothing here imports a stage package (plan, run, results, ...): they stand above it.
"""

from dbscale.core.answers import (
    CheckReport,
    ConditionResult,
    CpuScore,
    DataStep,
    DataSummary,
    HistogramFigures,
    ProbeAnswer,
    RequestResponse,
    Streams,
    WorkloadEntry,
)
from dbscale.core.native import (
    NetServer,
    Row,
    Run,
    Session,
    check,
    check_workload,
    cleanup,
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
    "CheckReport",
    "ConditionResult",
    "CpuScore",
    "DataStep",
    "DataSummary",
    "HistogramFigures",
    "NetServer",
    "ProbeAnswer",
    "RequestResponse",
    "Row",
    "Run",
    "Session",
    "Streams",
    "WorkloadEntry",
    "check",
    "check_workload",
    "cleanup",
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
