"""dbscale's TPC-H-derived workload against go-tpc v1.0.7's `tpch` on MariaDB: load time and the
22 queries' times at the same scale factor, the two tools alternating (the order swapped each
round) so drift hits both alike.

Per round and tool: a freshly created database loaded (go-tpc `tpch prepare --sf SF -T N`,
dbscale `prepare tpch --set scale_factor=SF --set loaders=N`, wall time), then one pass of the
queries in order on it (go-tpc `tpch run --queries ... --count N`, dbscale `run tpch -c 1 -t N
--set order=sequential --set parameters=qualification --set queries=...`); then dbscale's pass
on go-tpc's tables, the same data and schema as go-tpc's pass, so the tools' own share shows
apart from the schemas'.

What each tool times differs: go-tpc stops its clock when the server's first reply arrives
(before reading the rows), dbscale once the last row is read; go-tpc prints seconds with two
decimals. go-tpc's schema has the primary keys only, created before the rows; dbscale's adds
indexes on the foreign-key columns and the foreign keys (unchecked on MariaDB) after the rows,
then ANALYZE."""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tools import timed  # bench/tools.py, beside this script
from vs_gotpc import GO_TPC, fresh_database, line  # bench/vs_gotpc.py, beside this script

DBSCALE = [sys.executable, "-m", "dbscale"]
# The queries that end within a minute on both schemas at scale factor 1 on MariaDB here (256 MB
# buffer pool): go-tpc's (primary keys only) took past 60 s on Q13, Q17, Q20 and Q22 (Q13 past
# 14 minutes), dbscale's (with indexes on the foreign-key columns) on Q9 and Q14 (Q14 past 6
# minutes): docs/tpch.md. `--queries 1-22` runs them all.
DEFAULT_QUERIES = "1-8,10-12,15,16,18,19,21"
CROSS = "dbscale on go-tpc's tables"


@dataclass
class Pass:
    """One pass of the 22 queries: seconds per query number."""

    seconds: dict[int, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


def with_database(url: str, suffix: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


def go_tpc_base(url: str, sf: int) -> list[str]:
    parts = urlsplit(url)
    return [GO_TPC, "tpch", "-d", "mysql", "-H", parts.hostname or "127.0.0.1", "-P",
            str(parts.port or 3306), "-U", parts.username or "root", "-D",
            parts.path.lstrip("/"), "--sf", str(sf)]  # fmt: skip


def go_tpc_load(url: str, args: argparse.Namespace) -> float:
    fresh_database(url)
    _, _, wall = timed([*go_tpc_base(url, args.sf), "prepare", "-T", str(args.threads)])
    return wall


def query_numbers(text: str) -> list[int]:
    numbers: list[int] = []
    for item in text.split(","):
        first, _, last = item.partition("-")
        numbers.extend(range(int(first), int(last or first) + 1))
    return numbers


def go_tpc_pass(url: str, args: argparse.Namespace) -> Pass:
    names = ",".join(f"q{q}" for q in args.query_numbers)
    out, _, _ = timed([*go_tpc_base(url, args.sf), "run", "--queries", names, "--count",
                       str(len(args.query_numbers)), "--interval", "1h"])  # fmt: skip
    found = re.findall(r"\[Summary\] Q(\d+): ([0-9.]+)s", out)
    if len(found) != len(args.query_numbers):
        sys.exit(f"error: go-tpc ran {len(found)} of the queries:\n{out[-2000:]}")
    return Pass({int(q): float(s) for q, s in found})


def dbscale_load(url: str, args: argparse.Namespace) -> float:
    fresh_database(url)
    _, _, wall = timed([*DBSCALE, "prepare", "tpch", "--target", url, "--tls", "disable",
                        "--set", f"scale_factor={args.sf}", "--set",
                        f"loaders={args.threads}"])  # fmt: skip
    return wall


def dbscale_pass(url: str, args: argparse.Namespace, out: Path) -> Pass:
    timed([*DBSCALE, "run", "tpch", "--target", url, "--tls", "disable", "--set",
           f"scale_factor={args.sf}", "--set", "order=sequential", "--set",
           "parameters=qualification", "--set", f"queries={args.queries}", "-c", "1", "-t",
           str(len(args.query_numbers)), "--out", str(out)])  # fmt: skip
    record = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
    if record["failed"]:
        sys.exit(f"error: {record['failed']} queries failed on {url}: {record['errors']}")
    types = record["transaction_types"]
    return Pass({q: types[f"q{q}"]["latency_ms"]["mean"] / 1000 for q in args.query_numbers})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mysql-url", required=True)
    parser.add_argument("--pg-url")  # servers.bash passes it; go-tpc has no PostgreSQL driver
    parser.add_argument("--sf", type=int, default=1, help="go-tpc's scale factor: a whole number")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--queries", default=DEFAULT_QUERIES, help="as tpch's queries parameter")
    args = parser.parse_args()
    args.query_numbers = query_numbers(args.queries)
    theirs_url = with_database(args.mysql_url, "_gotpc")
    ours_url = with_database(args.mysql_url, "_dbscale")
    loads: dict[str, list[float]] = {"go-tpc": [], "dbscale": []}
    passes: dict[str, list[Pass]] = {"go-tpc": [], "dbscale": [], CROSS: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for tool in ("go-tpc", "dbscale") if r % 2 == 0 else ("dbscale", "go-tpc"):
                if tool == "go-tpc":
                    loads[tool].append(go_tpc_load(theirs_url, args))
                    passes[tool].append(go_tpc_pass(theirs_url, args))
                    passes[CROSS].append(dbscale_pass(theirs_url, args, Path(tmp) / f"x{r}"))
                else:
                    loads[tool].append(dbscale_load(ours_url, args))
                    passes[tool].append(dbscale_pass(ours_url, args, Path(tmp) / f"own{r}"))
                print(f"round {r + 1} {tool:<7}: load {loads[tool][-1]:7.1f} s, queries "
                      f"{passes[tool][-1].total:7.1f} s", flush=True)  # fmt: skip
            print(f"round {r + 1} {CROSS}: queries {passes[CROSS][-1].total:7.1f} s")
    cross = passes[CROSS]
    print(f"\nMariaDB, scale factor {args.sf}, {args.threads} loaders, {args.repeat} rounds, "
          f"queries {args.queries} (medians; change = dbscale vs go-tpc)")  # fmt: skip
    line("load", "s", loads["dbscale"], loads["go-tpc"], width=34)
    line("queries, each on its own tables", "s", [p.total for p in passes["dbscale"]],
         [p.total for p in passes["go-tpc"]], width=34)  # fmt: skip
    line("queries, both on go-tpc's tables", "s", [p.total for p in cross],
         [p.total for p in passes["go-tpc"]], width=34)  # fmt: skip
    print("  per query (medians, s): query  dbscale-own  dbscale-on-go-tpc's  go-tpc")
    for q in args.query_numbers:
        own = statistics.median(p.seconds[q] for p in passes["dbscale"])
        on_theirs = statistics.median(p.seconds[q] for p in cross)
        go = statistics.median(p.seconds[q] for p in passes["go-tpc"])
        print(f"    Q{q:<3} {own:9.3f} {on_theirs:9.3f} {go:9.2f}")


if __name__ == "__main__":
    main()
