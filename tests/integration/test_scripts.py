"""pgbench script files run unchanged: dbscale and pgbench run the same files on the same
database, and the rows they leave behind agree; weighted mixes come out in their weights; bad
scripts are refused before anything runs; run-time errors fail transactions by class and line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import REPO, PgTestServer
from tests.integration.conftest import dbscale, read_runs
from tests.integration.mariadb import mariadb_from_env
from tests.integration.test_pgbench_interop import pgbench

SCRIPTS = Path(__file__).parent / "scripts"
LOG_TABLE = "CREATE TABLE script_log (tool text, client int, what text, v bigint)"


def _rows(live: PgTestServer, db: str, tool: str) -> dict[str, tuple[int, int]]:
    """What a tool's runs inserted: per kind of row, how many and the sum of their values."""
    text = live.psql(
        f"SELECT what, count(*), sum(v) FROM script_log WHERE tool = '{tool}' GROUP BY what", db
    )
    rows = [line.split("|") for line in text.splitlines() if line]
    return {what: (int(n), int(total)) for what, n, total in rows}


def _both_tools(
    live: PgTestServer, db: str, name: str, clients: int, per_client: int, out: Path
) -> tuple[Any, dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """Runs script `name` under pgbench, then dbscale (results in `out`), on a fresh database;
    dbscale's run and the rows each tool inserted."""
    url = live.fresh_database(db)
    live.psql(LOG_TABLE, db)
    script = str(SCRIPTS / name)
    counts = ["-c", str(clients), "-t", str(per_client)]
    ran = pgbench(live, "-n", *counts, "-D", "tool=pgbench", "-f", script, url)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    done = dbscale("run", f"script:{script}", "--target", url, *counts,
                   "-D", "tool=dbscale", "--out", str(out))  # fmt: skip
    done.assert_ok()
    return done, _rows(live, db, "pgbench"), _rows(live, db, "dbscale")


def test_dbscale_and_pgbench_leave_the_same_rows(live: PgTestServer, tmp_path: Path) -> None:
    out = tmp_path / "r"
    done, theirs, ours = _both_tools(live, "dbscale_scripts", "every_command.sql", 3, 5, out)
    assert "number of transactions actually processed: 15/15" in done.out
    assert ours == theirs
    # Clients 0 and 2 are even, 1 is one; 5 transactions each.
    assert ours == {
        "gset-ok": (15, 15), "even": (10, 10), "one": (5, 5), "aset": (15, 45),
        "shell": (15, 15 * 15), "scale": (15, 15),
    }  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    assert (record["transactions"], record["failed"]) == (15, 0)
    assert record["config"]["workload"]["scripts"][0]["name"] == str(SCRIPTS / "every_command.sql")
    # Per command (pgbench -r): how often each ran; the branches not taken never did.
    counts = {c["line"]: c["count"] for c in record["commands"]}
    assert (counts[3], counts[7], counts[9], counts[11]) == (15, 15, 15, 0)  # never bad
    assert (counts[14], counts[16], counts[18]) == (10, 5, 0)  # even, one, odd
    assert all(c["failures"] == 0 for c in record["commands"])
    assert "statement latencies in milliseconds and failures:" in done.out


def test_weighted_mixes_come_out_in_their_weights(live: PgTestServer, tmp_path: Path) -> None:
    db = "dbscale_script_mix"
    url = live.fresh_database(db)
    live.psql(LOG_TABLE, db)
    heavy, light = SCRIPTS / "heavy.sql", SCRIPTS / "light.sql"
    ran = pgbench(live, "-n", "-c", "2", "-t", "400", "-D", "tool=pgbench",
                  "-f", f"{heavy}@3", "-f", f"{light}@1", url)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = tmp_path / "r"
    done = dbscale("run", f"script:{heavy}@3", f"script:{light}@1", "--target", url, "-c", "2",
                   "-t", "400", "-D", "tool=dbscale", "--out", str(out))  # fmt: skip
    done.assert_ok()
    assert "SQL script 1: " in done.out and "weight: 3 (targets 75.0% of total)" in done.out
    for tool in ("pgbench", "dbscale"):
        rows = _rows(live, db, tool)
        assert rows["heavy"][0] + rows["light"][0] == 800
        # 800 draws at 3:1: 600 +- 12.2 heavy; 5 deviations either way would be a wrong mix.
        assert abs(rows["heavy"][0] - 600) < 61, (tool, rows)
    [record] = read_runs(out / "runs.jsonl")
    kinds = record["transaction_types"]
    assert kinds[str(heavy)]["transactions"] == _rows(live, db, "dbscale")["heavy"][0]


def test_builtins_join_a_mix(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r"
    select_only = tmp_path / "select_only.sql"
    select_only.write_text("\\set aid random(1, 100000 * :scale)\n"
                           "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")  # fmt: skip
    dbscale("run", f"script:{select_only}@1", "tpcb@1", "--target", tpcb_url, "-c", "2",
            "-t", "100", "--protocol", "prepared", "--out", str(out)).assert_ok()  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    kinds = record["transaction_types"]
    assert set(kinds) == {str(select_only), "tpcb"}
    assert kinds["tpcb"]["transactions"] + kinds[str(select_only)]["transactions"] == 200
    assert record["failed"] == 0 and record["workload_params"]["scale"] == 1


def test_a_script_that_does_not_parse_is_refused_with_its_place(
    live: PgTestServer, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text("SELECT 1;\n\\if :x\n\\set y 1 +\n\\endif\n")
    done = dbscale("run", f"script:{bad}", "--target", live.url_for("postgres"),
                   "--out", str(tmp_path / "r"))  # fmt: skip
    done.assert_user_error()
    assert f'error: {bad}:3: syntax error in command "set" (column 11)' in done.err
    assert not (tmp_path / "r" / "runs.jsonl").exists()
    unknown = tmp_path / "unknown.sql"
    unknown.write_text("\\startover\n")
    done = dbscale("run", f"script:{unknown}", "--target", live.url_for("postgres"))
    done.assert_user_error()
    assert f'{unknown}:1: invalid command in command "startover" (column 1)' in done.err


def test_run_time_errors_fail_transactions_by_class_and_line(
    live: PgTestServer, tmp_path: Path
) -> None:
    script = tmp_path / "errors.sql"
    script.write_text("\\set n :client_id\n"
                      "\\if :n = 0\n"
                      "  \\set x 1 / :n\n"
                      "\\else\n"
                      "  SELECT 1 WHERE false \\gset\n"
                      "\\endif\n")  # fmt: skip
    out = tmp_path / "r"
    dbscale("run", f"script:{script}", "--target", live.url_for("postgres"), "-c", "2",
            "-t", "3", "--out", str(out))  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    assert (record["transactions"], record["failed"]) == (0, 6)
    by_class = record["errors"]["by_class"]
    assert by_class == {
        f"script {script}:3: division by zero": 3,
        f"script {script}:5: expected one row, got 0": 3,
    }
    failures = {c["line"]: c["failures"] for c in record["commands"]}
    assert (failures[3], failures[5], failures[1]) == (3, 3, 0)


def test_a_failed_statement_keeps_the_servers_words(live: PgTestServer, tmp_path: Path) -> None:
    # The class is the SQLSTATE; the first message of each class is kept and printed, as
    # pgbench prints the server's message.
    script = tmp_path / "cast.sql"
    script.write_text("SELECT 'x'::int;\n")
    out = tmp_path / "r"
    done = dbscale("run", f"script:{script}", "--target", live.url_for("postgres"), "-t", "2",
                   "--out", str(out))  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    message = f'{script}:1: invalid input syntax for type integer: "x"'
    assert record["errors"]["by_class"] == {"sql_22P02": 2}
    assert record["errors"]["messages"] == {"sql_22P02": message}
    assert f"sql_22P02 (2): {message}" in done.out


def test_scripts_run_on_mariadb(tmp_path: Path, core: object) -> None:
    server = mariadb_from_env()
    url = server.fresh_database("dbscale_scripts")
    server.sql(f"USE dbscale_scripts; {LOG_TABLE}")
    script = tmp_path / "mysql.sql"
    script.write_text("\\set v random(1, 10) * 2\n"
                      "SELECT :v AS doubled, 'x' AS letter \\gset\n"
                      "\\if :doubled % 2 = 0\n"
                      "  INSERT INTO script_log VALUES ('dbscale', :client_id, :'letter', :v);\n"
                      "\\endif\n")  # fmt: skip
    dbscale("run", f"script:{script}", "--target", url, "-c", "2", "-t", "10",
            "--out", str(tmp_path / "r")).assert_ok()  # fmt: skip
    counts = server.sql("SELECT what, count(*), sum(v % 2) FROM dbscale_scripts.script_log "
                        "GROUP BY what")  # fmt: skip
    assert counts.split() == ["x", "20", "0"]


def test_pipelines_send_their_statements_together(live: PgTestServer, tmp_path: Path) -> None:
    db = "dbscale_script_pipeline"
    url = live.fresh_database(db)
    live.psql(LOG_TABLE, db)
    script = str(SCRIPTS / "pipeline.sql")
    ran = pgbench(live, "-n", "-M", "prepared", "-c", "2", "-t", "3", "-D", "tool=pgbench",
                  "-f", script, url)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    dbscale("run", f"script:{script}", "-M", "prepared", "--target", url, "-c", "2", "-t", "3",
            "-D", "tool=dbscale", "--out", str(tmp_path / "r")).assert_ok()  # fmt: skip
    assert _rows(live, db, "dbscale") == _rows(live, db, "pgbench") == {
        "piped": (12, 18), "after": (6, 30)}  # fmt: skip
    # \syncpipeline (PostgreSQL 17's pgbench) reads the results so far and stays in the pipeline.
    synced = tmp_path / "synced.sql"
    synced.write_text("\\startpipeline\n"
                      "INSERT INTO script_log VALUES (:tool, :client_id, 'first', 1);\n"
                      "\\syncpipeline\n"
                      "INSERT INTO script_log VALUES (:tool, :client_id, 'second', 2);\n"
                      "\\endpipeline\n")  # fmt: skip
    dbscale("run", f"script:{synced}", "-M", "extended", "--target", url, "-c", "2", "-t", "4",
            "-D", "tool=synced", "--out", str(tmp_path / "synced")).assert_ok()  # fmt: skip
    assert _rows(live, db, "synced") == {"first": (8, 8), "second": (8, 16)}
    # A statement failing inside the pipeline: the server skips the rest up to the sync point
    # and the implicit transaction rolls back, so nothing of it stays; the error surfaces at
    # \endpipeline, where the results are read.
    failing = tmp_path / "failing.sql"
    failing.write_text("\\startpipeline\n"
                       "INSERT INTO script_log VALUES (:tool, 0, 'before-error', 1);\n"
                       "SELECT 1 / 0;\n"
                       "INSERT INTO script_log VALUES (:tool, 0, 'after-error', 1);\n"
                       "\\endpipeline\n")  # fmt: skip
    out = tmp_path / "failing"
    dbscale("run", f"script:{failing}", "-M", "extended", "--target", url, "-t", "2",
            "-D", "tool=failing", "--out", str(out))  # fmt: skip
    [record] = read_runs(out / "runs.jsonl")
    assert (record["transactions"], record["failed"]) == (0, 2)
    assert record["errors"]["by_class"] == {"sql_22012": 2}
    assert {c["line"]: c["failures"] for c in record["commands"]}[5] == 2
    assert _rows(live, db, "failing") == {}
    # The simple protocol has no pipeline: refused before the run starts.
    done = dbscale("run", f"script:{script}", "--target", url, "-t", "1", "-D", "tool=x")
    done.assert_user_error()
    assert "pipeline.sql:5: cannot use pipeline mode with the simple query protocol" in done.err


def test_a_counted_run_whose_clients_cannot_connect_ends(
    live: PgTestServer, tmp_path: Path
) -> None:
    # Prepared, ':x' becomes '$1' inside a literal: the statement cannot be prepared, so no
    # connection is usable (pgbench fails the same way). A counted run has no deadline: its
    # clients stop after the failed attempt, and the run is judged failed.
    script = tmp_path / "unpreparable.sql"
    script.write_text("SELECT ':x';\n")
    out = tmp_path / "r"
    done = dbscale("run", f"script:{script}", "-M", "prepared", "--target",
                   live.url_for("postgres"), "-c", "2", "-t", "5", "-D", "x=1",
                   "--out", str(out), timeout_s=60)  # fmt: skip
    assert done.code != 0, done.text
    [record] = read_runs(out / "runs.jsonl")
    assert record["transactions"] == 0
    assert record["verdict"]["status"] == "failed"


def test_hostile_scripts_get_one_error_line_not_a_crash(tmp_path: Path, core: object) -> None:
    """Deep nesting (which once overflowed the stack, exit 139) and a huge file are refused
    while planning, even under --dry-run, with the file and line."""
    deep = tmp_path / "deep.sql"
    deep.write_text("\\set x " + "abs(" * 5000 + "1" + ")" * 5000 + "\n")
    done = dbscale("run", f"script:{deep}", "--target", "postgresql://u@127.0.0.1:1/db",
                   "--dry-run")  # fmt: skip
    done.assert_user_error()
    assert f"error: {deep}:1:" in done.err and "nested too deeply" in done.err
    huge = tmp_path / "huge.sql"
    huge.write_bytes(b"SELECT 1;\n" * 200_000)  # 2 MB
    done = dbscale("run", f"script:{huge}", "--target", "postgresql://u@127.0.0.1:1/db",
                   "--dry-run")  # fmt: skip
    done.assert_user_error()
    assert "is over 1 MiB" in done.err


def test_stored_rows_nulls_and_sleeps_as_pgbench_has_them(
    live: PgTestServer, tmp_path: Path
) -> None:
    _, theirs, ours = _both_tools(live, "dbscale_store_rows", "store_rows.sql", 2, 3, tmp_path)
    assert ours == theirs
    # The last row of each result (3 + 20), a NULL as empty text, both sleeps taken.
    assert ours == {"aset-rows": (6, 6 * 23), "null-gset": (6, 0), "slept": (6, 6)}


def test_a_statement_that_will_not_prepare_is_not_blamed_on_max_connections(
    live: PgTestServer, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text("SELECT 1 + ;\n")
    out = tmp_path / "r"
    done = dbscale("run", f"script:{bad}", "--target", live.url_for("postgres"), "-M", "prepared",
                   "-c", "2", "-T", "1s", "--out", str(out))  # fmt: skip
    done.assert_user_error()
    assert "max_connections" not in done.err, done.err
    assert "syntax error" in done.err and "would not prepare" in done.err.split("hint:")[1]
    [record] = read_runs(out / "runs.jsonl")
    assert record["connect_error_kind"] == "sql" and record["verdict"]["status"] == "failed"


def _shell_children(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (from /proc: no procps needed)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and marker in line and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def test_shell_commands_die_with_the_run(live: PgTestServer, tmp_path: Path) -> None:
    # A \shell still running when the run stops at once (a second Ctrl-C) is killed, its
    # children too: nothing of a script outlives its run.
    marker = "sleep 97.25"
    script = tmp_path / "shell.sql"
    script.write_text(f"\\shell sh -c '{marker}; true'\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "run", f"script:{script}", "--target",
         live.url_for("postgres"), "-T", "60s", "--out", str(tmp_path / "r")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not _shell_children(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _shell_children(marker), "the script's shell command did not start"
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    deadline = time.monotonic() + 5
    while _shell_children(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _shell_children(marker), "a shell command outlived its run"


def test_shell_output_and_a_bad_gset_name_read_as_pgbench_s(
    live: PgTestServer, tmp_path: Path
) -> None:
    """pgbench's own cases (issue 42): `\\shell`'s output reaches standard output as pgbench's
    does, and a `\\gset` into an invalid name says it could not store into the variable."""
    url = live.url_for("postgres")
    script = tmp_path / "shell_echo.sql"
    script.write_text("\\shell echo dbscale-shell-said-this\nSELECT 1;\n")
    done = dbscale("run", f"script:{script}", "--target", url, "-t", "2", "--out",
                   str(tmp_path / "echo"))  # fmt: skip
    done.assert_ok()
    assert done.out.splitlines().count("dbscale-shell-said-this") == 2, done.out
    bad = tmp_path / "gset.sql"
    bad.write_text('SELECT 1 AS "a b" \\gset\n')
    out = tmp_path / "gset"
    dbscale("run", f"script:{bad}", "--target", url, "-t", "1", "--out", str(out))
    [record] = read_runs(out / "runs.jsonl")
    text = json.dumps(record["errors"])
    assert 'invalid variable name: \\"a b\\"; error storing into variable a b' in text, text
