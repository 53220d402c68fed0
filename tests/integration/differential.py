"""A differential harness: each case of a corpus of pgbench scripts runs under pgbench and under
dbscale's engine on the same database, each writing what it computed to a table, and the two
outcomes are compared: whether the script ran, was refused before running, or failed while
running; the values it stored (exactly, or by their distribution for random functions); and the
words of an error. `python -m tests.integration.differential [CASE...]` prints every case's
comparison against the test server (`make servers-start`; its environment sourced).

The corpus (`scripts/differential/*.txt`) holds cases in two forms:

    expr NAME: EXPRESSION            \\set r EXPRESSION, then r stored
    == NAME [option ...]             a whole script, up to the next case
    SCRIPT LINES                     `@log VALUE` stores VALUE (`:r`, text) as one row

Options: `-D name=value`, `t=N` transactions, `c=N` clients, `M=extended|prepared` (the query
protocol, simple by default), `dist` (values compared by their
distributions), `differs=WORD` (a difference docs/scripts.md lists under "what differs": the
case must still differ, so a fix is noticed and the docs brought up to date).
"""

from __future__ import annotations

import math
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).parent / "scripts" / "differential"
LOG_TABLE = "CREATE TABLE diff_log (id bigserial, tool text, name text, v text)"
SEED = 20261127  # both tools: the same --random-seed
# Two-sample Kolmogorov-Smirnov critical value at alpha = 0.001 (c(alpha) = 1.95): a pair of
# samples from one distribution differs by more in one seeded case out of a thousand.
KS_C_ALPHA = 1.95


@dataclass(frozen=True)
class Case:
    name: str
    script: str
    defines: tuple[str, ...] = ()
    transactions: int = 1
    clients: int = 1
    distribution: bool = False
    differs: str | None = None
    protocol: str = "simple"


@dataclass(frozen=True)
class Ran:
    """What one tool did with a case: `ok`, `refused` (before running) or `failed` (while
    running); the values it stored, in order; its error in words (normalized)."""

    status: str
    values: tuple[str, ...] = ()
    message: str = ""


@dataclass
class Comparison:
    case: Case
    pgbench: Ran
    dbscale: Ran
    problems: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.problems


def load_corpus(directory: Path = CORPUS) -> list[Case]:
    cases: list[Case] = []
    for path in sorted(directory.glob("*.txt")):
        cases += parse_corpus(path.read_text(encoding="utf-8"))
    names = [c.name for c in cases]
    repeated = sorted({n for n in names if names.count(n) > 1})
    assert not repeated, f"cases named twice: {repeated}"
    return cases


def parse_corpus(text: str) -> list[Case]:
    cases: list[Case] = []
    header: list[str] | None = None
    body: list[str] = []

    def close() -> None:
        if header is not None:
            cases.append(_case(header, "\n".join(body).strip("\n") + "\n"))

    for line in text.splitlines():
        if line.startswith("expr "):
            close()
            header, body = None, []
            name, _, expression = line[5:].partition(":")
            cases.append(Case(name.strip(), f"\\set r {expression.strip()}\n@log :r\n"))
        elif line.startswith("== "):
            close()
            header, body = shlex.split(line[3:]), []
        elif header is not None:
            body.append(line)
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"corpus line outside a case: {line!r}")
    close()
    return cases


def _case(header: list[str], script: str) -> Case:
    name, options = header[0], header[1:]
    defines: list[str] = []
    values: dict[str, object] = {}
    i = 0
    while i < len(options):
        option = options[i]
        if option == "-D":
            defines.append(options[i + 1])
            i += 1
        elif option == "dist":
            values["distribution"] = True
        elif option.startswith("M="):
            values["protocol"] = option.removeprefix("M=")
        elif option.startswith(("t=", "c=")):
            key = "transactions" if option[0] == "t" else "clients"
            values[key] = int(option[2:])
        elif option.startswith("differs="):
            values["differs"] = option.removeprefix("differs=")
        else:
            raise ValueError(f"case {name}: unknown option {option!r}")
        i += 1
    return Case(name, script, tuple(defines), **values)  # type: ignore[arg-type]


def script_text(case: Case) -> str:
    """The case's script with its `@log` lines as INSERTs into diff_log."""
    lines = []
    for line in case.script.splitlines():
        if line.startswith("@log "):
            value = line[5:].strip()
            line = f"INSERT INTO diff_log (tool, name, v) VALUES (':tool', '{case.name}', "
            line += f"'{value}');"
        lines.append(line)
    return "\n".join(lines) + "\n"


class Harness:
    """Runs cases on one database of the test server (created afresh)."""

    def __init__(self, admin_url: str, pg_bin: Path, work: Path, database: str = "dbscale_diff"):
        self.pgbench, self.psql = _tool(pg_bin, "pgbench"), _tool(pg_bin, "psql")
        self.work = work
        self.base = admin_url.rsplit("/", 1)[0]
        self.url = f"{self.base}/{database}"
        self._psql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)', "postgres")
        self._psql(f'CREATE DATABASE "{database}"', "postgres")
        self._psql(LOG_TABLE, database)
        self.database = database

    def _psql(self, sql: str, database: str) -> str:
        done = subprocess.run(
            [self.psql, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-d", f"{self.base}/{database}", "-c", sql],
            capture_output=True, text=True, check=False, env=_no_pg_env(),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    def stored(self, tool: str, case: Case) -> tuple[str, ...]:
        text = self._psql(
            f"SELECT v FROM diff_log WHERE tool = '{tool}' AND name = '{case.name}' ORDER BY id",
            self.database,
        )
        return tuple(text.splitlines())

    def compare(self, case: Case) -> Comparison:
        path = self.work / f"{case.name}.sql"
        path.write_text(script_text(case), encoding="utf-8")
        theirs = self.run_pgbench(case, path)
        ours = self.run_dbscale(case, path)
        return judge(case, theirs, ours)

    def run_pgbench(self, case: Case, path: Path) -> Ran:
        defines = [a for d in ("tool=pgbench", *case.defines) for a in ("-D", d)]
        done = subprocess.run(
            [self.pgbench, "-n", "-t", str(case.transactions), "-M", case.protocol,
             "-c", str(case.clients), f"--random-seed={SEED}", *defines, "-f", str(path),
             self.url],
            capture_output=True, text=True, check=False, timeout=120, env=_no_pg_env(),
        )  # fmt: skip
        values = self.stored("pgbench", case)
        if done.returncode == 1:
            return Ran("refused", values, pgbench_message(done.stderr))
        if done.returncode != 0 or "aborted" in done.stderr:
            return Ran("failed", values, pgbench_message(done.stderr))
        return Ran("ok", values)

    def run_dbscale(self, case: Case, path: Path) -> Ran:
        from dbscale import core
        from dbscale.core.config import RunConfig, ScriptSource, TargetConfig, WorkloadConfig
        from dbscale.errors import DbscaleError
        from dbscale.plan.scripts import parse_defines

        defines = parse_defines(("tool=dbscale", *case.defines))
        source = ScriptSource(name=str(path), text=path.read_text(encoding="utf-8"))
        try:
            config = RunConfig(
                target=TargetConfig(url=self.url),
                workload=WorkloadConfig(name="script", scripts=[source], defines=defines),
                transactions=case.transactions, clients=case.clients, seed=SEED,
                duration_s=120, protocol=case.protocol,
            )  # fmt: skip
            result = core.Run(config).result()
        except DbscaleError as exc:
            return Ran("refused", self.stored("dbscale", case), dbscale_message(exc.message))
        values = self.stored("dbscale", case)
        if result.failed or result.errors.total:
            messages = list(result.errors.messages.values())
            return Ran("failed", values, dbscale_message(messages[0] if messages else ""))
        return Ran("ok", values)


def _tool(directory: Path, name: str) -> str:
    """The PostgreSQL program in `directory`, else on PATH."""
    path = directory / name
    return str(path) if path.is_file() else name


def _no_pg_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


_PLACE = re.compile(r"^\S*?\.sql:\d+(:\d+)?: ")
# Where pgbench says an error happened, which dbscale says by file and line instead.
_PGBENCH_PLACES = (
    (re.compile(r"^client \d+ script \d+ aborted in command \d+ query \d+: (ERROR:\s+)?"), ""),
    (re.compile(r"^client \d+ script \d+ command \d+ query \d+: "), ""),
    (re.compile(r"^condition error in script \"[^\"]*\" command \d+: "), "condition error: "),
    (re.compile(r"^client \d+ aborted in command \d+ \(\w+\) of script \d+; "), ""),
    (re.compile(r"^client \d+ aborted: "), ""),
)
_IN_COMMAND = re.compile(r' in command "\w+"$')
_COLUMN = re.compile(r" \(column \d+\)$")  # the column dbscale adds after pgbench's words


def pgbench_message(stderr: str) -> str:
    """pgbench's first error in words, without where it was (client, script, command): a line
    that goes on over the next (a shell command's output) is joined with it. A client's abort
    counts only when no error came before it."""
    lines = [t for t in _error_lines(stderr) if not t.startswith("Run was aborted")]
    specific = [t for t in lines if not re.match(r"client \d+ aborted in command", t)]
    words = [_without_place(text) for text in specific or lines]
    if not words:
        return ""
    if len(words) > 1 and words[1].startswith("error storing into variable"):
        return f"{words[0]}; {words[1]}"  # a \gset's refusal and its failed store: one error
    return words[0]


def _without_place(text: str) -> str:
    for pattern, replacement in _PGBENCH_PLACES:
        text = pattern.sub(replacement, text)
    return _IN_COMMAND.sub("", _PLACE.sub("", text)).strip()


def _error_lines(stderr: str) -> list[str]:
    out: list[str] = []
    for line in stderr.splitlines():
        text = line.removeprefix("pgbench: error: ").removeprefix("pgbench: fatal: ")
        if text != line:
            out.append(text)
        elif out and not line.startswith(("pgbench:", " ", "\t")) and out[-1].count('"') % 2:
            out[-1] += line  # an error whose quoted text ran onto the next line
    return out


def dbscale_message(message: str) -> str:
    """dbscale's error in words, without its place (file:line, and the column after them)."""
    first = message.splitlines()[0] if message else ""
    return _IN_COMMAND.sub("", _COLUMN.sub("", _PLACE.sub("", first))).strip()


def judge(case: Case, theirs: Ran, ours: Ran) -> Comparison:
    comparison = Comparison(case, theirs, ours)
    problems = comparison.problems
    if theirs.status != ours.status:
        problems.append(f"pgbench {theirs.status}, dbscale {ours.status}")
    if case.distribution:
        problems += distribution_problems(theirs.values, ours.values)
    elif theirs.values != ours.values:
        problems.append(f"values: pgbench {theirs.values}, dbscale {ours.values}")
    if theirs.status != "ok" and theirs.message != ours.message:
        problems.append(f"message: pgbench {theirs.message!r}, dbscale {ours.message!r}")
    return comparison


def distribution_problems(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """Two samples of numbers: the same count, and one distribution by the two-sample KS test
    (alpha 0.001), both seeded so the verdict is the same on every run."""
    if len(a) != len(b):
        return [f"{len(a)} values from pgbench, {len(b)} from dbscale"]
    xs, ys = sorted(float(v) for v in a), sorted(float(v) for v in b)
    if not xs:
        return []
    statistic = ks_statistic(xs, ys)
    critical = KS_C_ALPHA * math.sqrt((len(xs) + len(ys)) / (len(xs) * len(ys)))
    if statistic > critical:
        return [f"distributions differ: KS D = {statistic:.4f} > {critical:.4f}"]
    return []


def ks_statistic(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The largest gap between the two sorted samples' empirical distribution functions."""
    i = j = 0
    gap = 0.0
    while i < len(xs) and j < len(ys):
        value = min(xs[i], ys[j])
        while i < len(xs) and xs[i] == value:
            i += 1
        while j < len(ys) and ys[j] == value:
            j += 1
        gap = max(gap, abs(i / len(xs) - j / len(ys)))
    return gap


def main(names: Sequence[str]) -> int:
    import tempfile

    harness = Harness(
        os.environ["DBSCALE_TEST_PG_URL"], Path(os.environ.get("DBSCALE_TEST_PG_BIN", "")),
        Path(tempfile.mkdtemp(prefix="dbscale-diff-")),
    )  # fmt: skip
    cases = [c for c in load_corpus() if not names or c.name in names]
    agree = 0
    for case in cases:
        result = harness.compare(case)
        agree += result.agree
        mark = "same" if result.agree else "DIFF"
        print(f"{mark} {case.name}: pgbench {result.pgbench} | dbscale {result.dbscale}")
        for problem in result.problems:
            print(f"     {problem}")
    print(f"{agree} of {len(cases)} cases agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
