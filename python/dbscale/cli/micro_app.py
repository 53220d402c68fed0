"""`dbscale micro cpu|net|disk`: the micro-benchmarks' command line (their work is in
micro_commands.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dbscale.cli import micro_commands
from dbscale.cli import options as o

micro_app = typer.Typer(
    name="micro", help="Micro-benchmarks of this machine.", no_args_is_help=True
)


@micro_app.command("cpu")
def micro_cpu_cmd(
    repetitions: Annotated[
        int, typer.Option("--repetitions", "-n", help="Runs of each mode (the Cloud Report: 10).")
    ] = 10,
    seconds: Annotated[
        float, typer.Option("--seconds", help="Length of each run, in seconds.")
    ] = 2.0,
    as_json: o.AsJson = False,
) -> None:
    """CPU score of dbscale's own kernels (not CoreMark): one thread, every CPU, per vCPU."""
    micro_commands.micro_cpu(repetitions, seconds, as_json)


@micro_app.command("net")
def micro_net_cmd(
    serve: Annotated[
        bool, typer.Option("--serve", help="Answer clients here until Ctrl-C (the other side).")
    ] = False,
    connect: Annotated[
        str | None, typer.Option("--connect", help="HOST or HOST:PORT of a `--serve` side.")
    ] = None,
    port: Annotated[int, typer.Option("--port", help="Port to serve on or connect to.")] = 12865,
    bind: Annotated[str, typer.Option("--bind", help="Address to serve on.")] = "127.0.0.1",
    seconds: Annotated[
        float, typer.Option("--seconds", help="Request/response and measured stream time.")
    ] = 10.0,
    streams: Annotated[
        int | None, typer.Option("--streams", help="Streams to measure (default: searched).")
    ] = None,
    step: Annotated[float, typer.Option("--step", help="Seconds per search step.")] = 2.0,
    buffer_mib: Annotated[
        int, typer.Option("--buffer-mib", help="Socket send buffer per stream, MiB.")
    ] = 16,
    stop_after: Annotated[
        float | None, typer.Option("--stop-after", help="--serve: stop after SECONDS.")
    ] = None,
    as_json: o.AsJson = False,
) -> None:
    """Network request/response latency and multi-stream throughput to a `--serve` side."""
    micro_commands.micro_net(
        serve=serve, connect=connect, port=port, bind=bind, seconds=seconds, streams=streams,
        step_s=step, buffer_bytes=buffer_mib << 20, stop_after_s=stop_after, as_json=as_json,
    )  # fmt: skip


@micro_app.command("disk")
def micro_disk_cmd(
    directory: Annotated[
        Path, typer.Option("--dir", help="An empty directory on the disk to measure.")
    ],
    size: Annotated[str, typer.Option("--size", help="Test file size, MiB (e.g. 1024).")] = "1024",
    runtime: Annotated[
        str, typer.Option("--runtime", help="Each job's length (e.g. 30s).")
    ] = "30s",
    jobs: Annotated[
        str | None, typer.Option("--jobs", help="Comma list of jobs (default: all ten).")
    ] = None,
    as_json: o.AsJson = False,
) -> None:
    """Storage: fio with the Cloud Report's jobs on a file in --dir (removed afterwards)."""
    micro_commands.micro_disk(directory, size, runtime, jobs, as_json)
