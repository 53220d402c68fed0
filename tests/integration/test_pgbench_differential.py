"""pgbench's script language checked from outside: every case of the corpus
(`scripts/differential/`) runs under pgbench and under dbscale on one database, and what they
did (ran, refused, failed), what they stored and how they worded an error must agree, except
where docs/scripts.md lists a difference under "What differs" (such a case must still differ,
so a fix is noticed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO, PgTestServer
from tests.integration.differential import (
    Case,
    Harness,
    Ran,
    judge,
    load_corpus,
    parse_corpus,
    pgbench_message,
)

CASES = load_corpus()
WHAT_DIFFERS = (REPO / "docs" / "scripts.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def harness(live: PgTestServer, tmp_path_factory: pytest.TempPathFactory) -> Harness:
    work = tmp_path_factory.mktemp("differential")
    return Harness(live.url_for("postgres"), live.bin_dir, work)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pgbench_and_dbscale_agree(harness: Harness, case: Case) -> None:
    result = harness.compare(case)
    if case.differs is None:
        assert result.agree, "\n".join(result.problems)
        return
    assert not result.agree, (
        f"{case.name} now agrees with pgbench: drop its `differs` and the entry in scripts.md"
    )
    assert f"`differs={case.differs}`" in WHAT_DIFFERS, "list the difference in docs/scripts.md"


def test_the_corpus_covers_the_language() -> None:
    names = {c.name for c in CASES}
    assert len(CASES) >= 250
    functions = (
        "abs", "debug", "double", "exp", "greatest", "hash", "hash_fnv1a", "hash_murmur2", "int",
        "least", "ln", "mod", "permute", "pi", "pow", "power", "random", "random_exponential",
        "random_gaussian", "random_zipfian", "sqrt",
    )  # fmt: skip
    scripts = "\n".join(c.script.lower() for c in CASES)
    assert all(f"{f}(" in scripts for f in functions)
    for meta in ("\\set", "\\sleep", "\\setshell", "\\shell", "\\if", "\\elif", "\\else",
                 "\\endif", "\\gset", "\\aset", "\\startpipeline", "\\endpipeline"):  # fmt: skip
        assert meta in scripts, meta
    assert sum(c.distribution for c in CASES) >= 8
    assert {"err_double_literal", "tilde_plus", "err_open_transaction"} <= names


def test_the_comparison_notices_each_kind_of_difference() -> None:
    case = Case("c", "\\set r 1\n@log :r\n")
    assert judge(case, Ran("ok", ("1",)), Ran("ok", ("1",))).agree
    assert not judge(case, Ran("ok", ("-4",)), Ran("ok", ("0",))).agree
    assert not judge(case, Ran("failed"), Ran("ok")).agree
    worded = judge(case, Ran("refused", (), "syntax error"), Ran("refused", (), "missing"))
    assert worded.problems == ["message: pgbench 'syntax error', dbscale 'missing'"]
    spread = Case("d", "", distribution=True)
    same = tuple(str(i % 10) for i in range(1000))
    assert judge(spread, Ran("ok", same), Ran("ok", same)).agree
    shifted = tuple(str(i % 10 + 3) for i in range(1000))
    assert not judge(spread, Ran("ok", same), Ran("ok", shifted)).agree


def test_the_corpus_format_and_pgbenchs_messages_are_read() -> None:
    cases = parse_corpus("expr a: 1 + 2\n== b -D x=1 t=5 c=2 M=extended dist\n\\set r 1\n@log :r\n")
    assert [c.name for c in cases] == ["a", "b"]
    assert cases[0].script == "\\set r 1 + 2\n@log :r\n"
    b = cases[1]
    assert (b.defines, b.transactions, b.clients, b.protocol, b.distribution) == (
        ("x=1",), 5, 2, "extended", True,
    )  # fmt: skip
    stderr = (
        'pgbench: error: /tmp/x.sql:1: double constant overflow (1.0E309) in command "set"\n'
        "\\set r 1.0E309\n"
    )
    assert pgbench_message(stderr) == "double constant overflow (1.0E309)"
    aborted = (
        "pgbench: error: client 0 aborted in command 0 (set) of script 0; x\n"
        "pgbench: error: Run was aborted; the above results are incomplete.\n"
    )
    assert pgbench_message(aborted) == "x"
    shell = 'pgbench: error: echo: shell command must return an integer (not "abc\n")\n'
    assert pgbench_message(shell) == 'echo: shell command must return an integer (not "abc")'


def test_a_case_file_is_plain_text(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="outside a case"):
        parse_corpus("stray line\n")
    with pytest.raises(ValueError, match="unknown option"):
        parse_corpus("== x bogus\nSELECT 1;\n")
