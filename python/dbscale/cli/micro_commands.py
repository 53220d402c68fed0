"""What the `dbscale micro` commands do once their options are parsed: measure this machine's
CPU, storage or network with the micro-benchmark kernels and print the figures (a table, or
JSON with `--json`). Notes go to stderr, figures to stdout.
"""

from __future__ import annotations

import json
from pathlib import Path

from dbscale.cli.consoles import data_console, message_console
from dbscale.errors import ConfigError


def _p99(latency_us: dict[str, float]) -> str:
    return str(latency_us["99"]) if "99" in latency_us else "-"


def micro_cpu(repetitions: int, seconds: float, as_json: bool) -> None:
    """`dbscale micro cpu`: the CPU kernels' scores with their intervals."""
    from dbscale.micro.cpu import measure
    from dbscale.results.text_tables import text_table

    err, out = message_console(), data_console()
    result = measure(repetitions, seconds, note=lambda text: err.print(text, highlight=False))
    if as_json:
        out.print_json(json.dumps(result.record()))
        return
    out.print(f"CPU: {result.kernels}; {result.seconds:g} s per run", highlight=False)
    table = text_table(
        ("mode", "median iterations/s", "95% CI", "CV %", "runs"), left={"mode", "95% CI"}
    )
    for f, label in ((result.single, "one thread"), (result.multi, f"{result.threads} threads"),
                     (result.per_vcpu, "per vCPU")):  # fmt: skip
        ci = (f"[{f.ci_low:,.0f}, {f.ci_high or 0:,.0f}]" if f.ci_low is not None
              else "- (6+ runs)")  # fmt: skip
        cv = f"{f.cv_pct:.2f}" if f.cv_pct is not None else "-"
        table.add_row(label, f"{f.median:,.0f}", ci, cv, str(len(f.runs)))
    out.print(table)


def micro_net(
    *,
    serve: bool,
    connect: str | None,
    port: int,
    bind: str,
    seconds: float,
    streams: int | None,
    step_s: float,
    buffer_bytes: int,
    stop_after_s: float | None,
    as_json: bool,
) -> None:
    """`dbscale micro net --serve | --connect HOST`."""
    from dbscale.micro import net

    err, out = message_console(), data_console()
    if serve == (connect is not None):
        raise ConfigError(
            "give --serve on one machine or --connect HOST on the other (one of the two)",
            "dbscale micro net --serve --bind 0.0.0.0 there; dbscale micro net --connect HOST here",
        )
    if not 0 <= port <= 65535 or not 1 <= buffer_bytes >> 20 <= 1024:
        raise ConfigError(f"--port {port} / --buffer-mib: a port 0-65535, a buffer 1-1024 MiB")
    if stop_after_s is not None and not 0.1 <= stop_after_s <= 7 * 24 * 3600:
        raise ConfigError(f"--stop-after {stop_after_s:g}: from 0.1 s to a week")
    if serve:
        net.serve(bind, port, lambda text: err.print(text, highlight=False), stop_after_s)
        return
    result = net.measure(
        net.address(str(connect), port), seconds=seconds, streams=streams, step_s=step_s,
        buffer_bytes=buffer_bytes, note=lambda text: err.print(text, highlight=False),
    )  # fmt: skip
    if as_json:
        out.print_json(json.dumps(result.record()))
        return
    rr, st = result.request_response, result.streams
    assert rr is not None and st is not None
    out.print(
        f"request/response to {result.target}: {rr.transactions_per_s or 0:,.0f} transactions/s;"
        f" latency us: min {rr.min_us or 0:.1f} mean {rr.mean_us or 0:.1f} "
        f"p50 {rr.p50_us or 0:.1f} p90 {rr.p90_us or 0:.1f} p99 {rr.p99_us or 0:.1f} "
        f"max {rr.max_us or 0:.1f} stddev {rr.stddev_us or 0:.1f}",
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        f"throughput with {st.streams} stream(s): min {st.min_gbps or 0:.2f} mean "
        f"{st.mean_gbps or 0:.2f} max {st.max_gbps or 0:.2f} Gbit/s (per half second, "
        f"{(st.buffer_bytes or 0) >> 20} MiB send buffers)",
        highlight=False,
        soft_wrap=True,
    )


def micro_disk(directory: Path, size: str, runtime: str, jobs: str | None, as_json: bool) -> None:
    """`dbscale micro disk --dir PATH`: fio's figures per job."""
    from dbscale.micro import disk
    from dbscale.results.text_tables import text_table
    from dbscale.values import parse_duration

    err, out = message_console(), data_console()
    try:
        size_mib = int(size.strip().removesuffix("M").removesuffix("MiB"))
    except ValueError:
        raise ConfigError(f"--size {size!r} is not a number of MiB", "e.g. --size 1024") from None
    names = [j.strip() for j in jobs.split(",")] if jobs else list(disk.JOBS)
    result = disk.measure(
        directory, jobs=names, size_bytes=size_mib << 20,
        runtime_s=parse_duration(runtime, "--runtime"),
        note=lambda text: err.print(text, highlight=False),
    )  # fmt: skip
    if as_json:
        out.print_json(json.dumps(result.record()))
        return
    table = text_table(
        ("job", "read IOPS", "read MiB/s", "read p99 us", "write IOPS", "write MiB/s",
         "write p99 us", "fsync p99 us"), left={"job"},
    )  # fmt: skip
    for job in result.jobs:
        r, w = job.read, job.write
        fsync = job.fsync.latency_us if job.fsync is not None else {}
        table.add_row(
            job.job, f"{r.iops:,.0f}", f"{r.bandwidth_kib_s / 1024:,.1f}", _p99(r.latency_us),
            f"{w.iops:,.0f}", f"{w.bandwidth_kib_s / 1024:,.1f}", _p99(w.latency_us),
            _p99(fsync),
        )  # fmt: skip
    out.print(table)
