"""CH-benCHmark (issue 46): TPC-C's terminals and the 22 analytic queries in one run, on
PostgreSQL and MariaDB, TPC-C's consistency conditions after the mixed run, what the streams
cost the terminals' tpmC with its interval in the report, go-tpc's `ch` on dbscale's tables,
and the refusals."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from dbscale import load_results
from tests.conftest import REPO, PgTestServer, skip_or_fail
from tests.integration.conftest import in_process, read_runs
from tests.integration.mariadb import MariaDBTestServer

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]

NOWAIT = ("--set", "wait=false")
QUERY_TYPES = {f"q{n}" for n in range(1, 23)}
TPCC_TYPES = {"new_order", "payment", "order_status", "delivery", "stock_level"}


def _mixed_run(capsys: pytest.CaptureFixture[str], url: str, out: Path) -> dict[str, object]:
    """One terminal and one stream, 22 transactions each: the stream runs the 22 queries once."""
    in_process(capsys, "prepare", "ch", "--target", url, "--set", "warehouses=1").assert_ok()
    in_process(capsys, "run", "ch", "--target", url, *NOWAIT, "-c", "2", "-t", "22",
               "--repeat", "1", "--warmup-runs", "0", "--out", str(out)).assert_ok()  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    return record


@pytest.mark.parametrize("server", ["postgresql", "mariadb"])
def test_terminals_and_the_22_queries_run_together_and_tpcc_still_holds(
    server: str,
    live: PgTestServer,
    mariadb: MariaDBTestServer,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    name = f"dbscale_ch_{server}"
    url = live.fresh_database(name) if server == "postgresql" else mariadb.fresh_database(name)
    record = _mixed_run(capsys, url, tmp_path / "mixed")
    types = record["transaction_types"]
    assert isinstance(types, dict)
    assert set(types) >= QUERY_TYPES | {"new_order", "payment"}, sorted(types)
    assert all(types[q]["transactions"] == 1 and types[q]["failed"] == 0 for q in QUERY_TYPES)
    tpcc_done = sum(types[t]["transactions"] for t in TPCC_TYPES if t in types)
    assert tpcc_done == 22 and record["failed"] == 0, record["errors"]
    assert record["tpcc"]["tpmc"] > 0  # the terminals' New-Orders alone
    checked = in_process(capsys, "check", "ch", "--target", url)
    checked.assert_ok()
    assert re.search(r"all \d+ conditions hold", checked.out), checked.out


def test_the_report_states_what_the_streams_cost_the_terminals(
    live: PgTestServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A study over analytic_streams [0, 1]: each point's clients are its terminals plus its
    streams, and the report's CH section gives tpmC's change with its interval."""
    url = live.fresh_database("dbscale_ch_study")
    in_process(capsys, "prepare", "ch", "--target", url, "--set", "warehouses=1").assert_ok()
    plan = tmp_path / "ch.yaml"
    plan.write_text(
        "name: ch-streams\n"
        f"targets: [{{name: main, url: '{url}'}}]\n"
        "workload: {name: ch, params: {wait: false}}\n"
        "load: {duration: 3s}\n"
        "matrix: {analytic_streams: [0, 1]}\n"
        "repeat: 2\nwarmup_runs: 0\n"
    )
    out = tmp_path / "study"
    in_process(capsys, "run", str(plan), "--out", str(out)).assert_ok()
    clients = {r["workload_params"]["analytic_streams"]: r["clients"]
               for r in read_runs(out / "runs.jsonl")}  # fmt: skip
    assert clients == {0: 1, 1: 2}, clients
    page = (out / "report.html").read_text()
    section = page[page.index('id="ch"') :]
    text = re.sub(r"<[^>]+>", " ", section)
    assert "baseline" in text
    change = re.search(r"([+-]\d+\.\d)% \[([+-]\d+\.\d)%, ([+-]\d+\.\d)%\] vs analytic_streams=0",
                       text)  # fmt: skip
    assert change is not None, text[:2000]
    low, high = float(change.group(2)), float(change.group(3))
    assert low <= float(change.group(1)) <= high
    assert load_results(out).runs["tpcc_tpmc"].notna().all()


def test_go_tpc_runs_its_ch_on_the_tables_dbscale_loaded(
    mariadb: MariaDBTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """go-tpc v1.0.7's `ch run` (its own TPC-C and query texts) on dbscale's MariaDB tables:
    its terminals commit New-Orders and its stream answers queries without an error."""
    go_tpc = REPO / ".cache" / "bin" / "go-tpc"
    if not go_tpc.exists():
        skip_or_fail("go-tpc is not installed: run `make peers` (scripts/install-go-tpc.sh)")
    url = mariadb.fresh_database("dbscale_ch_gotpc")
    in_process(capsys, "prepare", "ch", "--target", url, "--set", "warehouses=1").assert_ok()
    done = subprocess.run(
        [str(go_tpc), "ch", "run", "-d", "mysql", "-H", "127.0.0.1", "-P", str(mariadb.port),
         "-U", "root", "-D", "dbscale_ch_gotpc", "--warehouses", "1", "-T", "1", "-t", "1",
         "--queries", "q1,q3,q4,q6,q12,q13,q22", "--time", "12s", "--interval", "100s"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    tpmc = re.search(r"tpmC: ([\d.]+)", output)
    assert tpmc is not None and float(tpmc.group(1)) > 0, output
    ran = {line.split()[1] for line in output.splitlines() if line.startswith("[Summary] Q")}
    # A query cut by the run's end shows as Qn_ERR; any other error would too.
    assert len({q for q in ran if not q.endswith("_ERR")}) >= 5, output
    assert len([q for q in ran if q.endswith("_ERR")]) <= 1, output


def test_refusals_say_what_to_do(live: PgTestServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = live.fresh_database("dbscale_ch_refused")
    in_process(capsys, "prepare", "tpcc", "--target", url, "--set", "warehouses=1").assert_ok()
    missing = in_process(capsys, "run", "ch", "--target", url, *NOWAIT, "-c", "2", "-t", "1")
    assert missing.code != 0 and "supplier table is missing" in missing.err, missing.text
    assert "dbscale prepare ch" in missing.err
    in_process(capsys, "prepare", "ch", "--target", url, "--set", "warehouses=1").assert_ok()
    alone = in_process(capsys, "run", "ch", "--target", url, *NOWAIT, "-c", "1", "-t", "1")
    assert alone.code != 0 and "leaves no TPC-C terminal" in alone.err, alone.text
    bad = in_process(capsys, "run", "ch", "--target", url, "--set", "queries=0,30", "-t", "1")
    assert bad.code != 0 and "queries must be numbers 1 to 22" in bad.err, bad.text
