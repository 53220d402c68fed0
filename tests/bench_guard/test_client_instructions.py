"""The client's cost per transaction, guarded where a noisy machine cannot fool the guard:
valgrind's callgrind counts the instructions of the engine's worker thread while one client runs
N transactions against a scripted server in the same process (`client_cost`, an example of
dbscale-core). Two N, and the difference per transaction: start-up and connecting cancel out.
A case that grows more than 3% over its committed baseline fails, naming it.

The baselines are `bench/client_cost_baseline.json`. Changing one is a deliberate, reviewed
change with its reason in the commit (`python -m tests.bench_guard.test_client_instructions
--write` prints the figures measured now). Callgrind counts user-space instructions only: the
kernel's share (syscalls) is `bench/vs_*.sh --syscalls`'s to watch."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO, skip_or_fail

BASELINE = REPO / "bench" / "client_cost_baseline.json"
BINARY = REPO / "target" / "release" / "examples" / "client_cost"
ALLOWED_GROWTH = 0.03
# Transactions of the two runs whose difference is counted.
FEW, MANY = 100, 600
# (workload, protocol of the wire, query protocol, clients on the one engine thread): pgbench's
# TPC-B and select-only, sysbench's point select on both wire protocols; with several clients the
# sends of a round go out batched (driver/send_batch.rs), with one they go out at once.
Case = tuple[str, str, str, int]
CASES: list[Case] = [
    ("tpcb", "postgresql", "prepared", 1),
    ("tpcb-select-only", "postgresql", "prepared", 1),
    ("tpcb-select-only", "postgresql", "simple", 1),
    ("sysbench:oltp_point_select", "postgresql", "prepared", 1),
    ("sysbench:oltp_point_select", "mysql", "prepared", 1),
    ("tpcb", "postgresql", "prepared", 4),
    ("tpcb-select-only", "postgresql", "prepared", 4),
    ("sysbench:oltp_point_select", "mysql", "prepared", 4),
]


def case_name(case: Case) -> str:
    *words, clients = case
    return " ".join(words) + (f" {clients} clients" if clients > 1 else "")


def _worker_instructions(case: Case, transactions: int) -> int:
    """Instructions of the engine's worker thread (the one running `run_thread`), each client
    running `transactions`."""
    workload, dialect, protocol, clients = case
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--fair-sched=yes",
             f"--callgrind-out-file={out}/cg.%p", str(BINARY), workload, dialect,
             str(transactions), protocol, str(clients)],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        for profile in Path(out).glob("cg.*-*"):
            text = profile.read_text(errors="replace")
            if "run_thread" in text:
                found = re.search(r"^summary: (\d+)", text, re.MULTILINE)
                assert found is not None, profile
                return int(found.group(1))
    raise AssertionError(f"no worker thread in the profiles of {case_name(case)}")


def instructions_per_transaction(case: Case) -> float:
    few, many = _worker_instructions(case, FEW), _worker_instructions(case, MANY)
    return (many - few) / ((MANY - FEW) * case[3])


def _tools() -> None:
    """valgrind, and the example built from the sources as they are (cargo does nothing when
    it is up to date): a stale binary would guard old code."""
    if shutil.which("valgrind") is None:
        skip_or_fail("valgrind is missing: `make system-deps` installs it")
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--example", "client_cost"],
        check=True, cwd=REPO,
    )  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_name)
def test_the_client_loop_costs_no_more_than_its_baseline(case: Case) -> None:
    _tools()
    baseline = json.loads(BASELINE.read_text())["instructions_per_transaction"]
    expected = baseline[case_name(case)]
    measured = instructions_per_transaction(case)
    growth = measured / expected - 1
    assert growth <= ALLOWED_GROWTH, (
        f"{case_name(case)}: {measured:,.0f} instructions per transaction, {growth:+.1%} over "
        f"its baseline of {expected:,.0f} (at most +{ALLOWED_GROWTH:.0%}): find what the client "
        "loop does more (valgrind --tool=callgrind on target/release/examples/client_cost), or "
        "update bench/client_cost_baseline.json in a commit that says why"
    )


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit("python -m tests.bench_guard.test_client_instructions --write")
    _tools()
    figures = {case_name(c): round(instructions_per_transaction(c), 1) for c in CASES}
    print(json.dumps(figures, indent=2))
