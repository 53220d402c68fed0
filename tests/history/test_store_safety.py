"""The history store under misuse (issue 40): two `history add` of one study at once store its
runs once; a foreign or wrongly typed Parquet file is named and nothing is added beside it; a
store that cannot be written is one clear error. And `rank A A` counts each run once."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from dbscale.cli.app import run_cli
from dbscale.errors import EXIT_FAILURE
from dbscale.history.store import HistoryStore
from dbscale.ranking.table import RankRequest, rank
from tests.conftest import REPO
from tests.synthetic import make_record, write_results


def _study(directory: Path, runs: int = 6) -> Path:
    rng = random.Random(7)
    return write_results(
        directory, [make_record({}, 1000.0 + i, rng=rng, repetition=i) for i in range(runs)]
    )


def test_two_adds_of_one_study_at_once_store_it_once(tmp_path: Path) -> None:
    study, store = _study(tmp_path / "s"), tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    command = [sys.executable, "-m", "dbscale", "history", "add", str(study), "--store", str(store)]
    both = [subprocess.Popen(command, env=env, cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # fmt: skip
    codes = sorted(p.wait(120) for p in both)
    assert codes[0] == 0, [p.communicate() for p in both]
    stored = [(r.run_id, r.metric) for r in HistoryStore(store).rows() if r.run_id]
    assert len(stored) == len(set(stored)), "a run stored twice"
    assert len({run for run, _ in stored}) == 6


def test_a_foreign_file_in_the_store_is_named_and_nothing_is_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("duckdb")
    import duckdb

    store = tmp_path / "store"
    assert run_cli(["history", "add", str(_study(tmp_path / "a")), "--store", str(store)]) == 0
    foreign = store / "ingests" / "foreign.parquet"
    duckdb.sql(f"COPY (SELECT 'x' AS value, 1 AS n) TO '{foreign}' (FORMAT parquet)")
    before = sorted(p.name for p in (store / "ingests").iterdir())
    capsys.readouterr()
    code = run_cli(["history", "add", str(_study(tmp_path / "b")), "--store", str(store)])
    err = capsys.readouterr().err
    assert code == EXIT_FAILURE, err
    assert "foreign.parquet is not a file of a dbscale history store" in err and "hint:" in err
    assert sorted(p.name for p in (store / "ingests").iterdir()) == before
    assert run_cli(["history", "show", "--store", str(store)]) == EXIT_FAILURE


def test_a_store_that_cannot_be_written_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    store.write_text("a file where the store should be")
    code = run_cli(["history", "add", str(_study(tmp_path / "a")), "--store", str(store)])
    err = capsys.readouterr().err
    assert code == EXIT_FAILURE and err.startswith("error: cannot write to the history store")


def test_a_study_given_twice_is_counted_once(tmp_path: Path) -> None:
    study = _study(tmp_path / "a")
    once = rank(RankRequest([study], "tps", ["target"]))
    twice = rank(RankRequest([study, study], "tps", ["target"]))
    assert [c.n for c in twice.configurations] == [c.n for c in once.configurations] == [6]
    doubled = [r for r in twice.left_out if "counted once" in r.reason]
    assert len(doubled) == 6
