"""`statements: {explain: true}`: the plan of each top statement, asked once per run after its
measured window (never inside it), so that compare can show a plan that changed.

PostgreSQL: the statement as the server keeps it (`$1` for every constant) is prepared and its
generic plan explained (`plan_cache_mode = force_generic_plan`, parameters NULL: the generic plan
does not look at them); nothing is executed. MySQL/MariaDB: `EXPLAIN FORMAT=JSON` of the text with
each `?` as 1000, 2000, ... (a digest keeps no values: the plan is for those). The plan is kept
as JSON, and as a shape (its nodes, tables and indexes in one line) that compares across runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from dbscale.modes import Dialect
from dbscale.observe.statements import fingerprint

EXPLAINED = 10  # the top statements by total time
PLAN_CHARS = 20_000
_PLANNABLE = re.compile(r"^\s*(select|update|delete|insert|with)\b", re.IGNORECASE)
_PG_PARAMETER = re.compile(r"\$(\d+)")


@dataclass(frozen=True)
class Plan:
    json: str
    shape: str


class Rows(Protocol):
    def rows(self, sql: str) -> list[list[object]]: ...


def _pg_shape(node: dict[str, Any]) -> str:
    name = str(node.get("Node Type", "?"))
    for key in ("Relation Name", "Index Name"):
        if key in node:
            name += f" {node[key]}"
    children = [_pg_shape(child) for child in node.get("Plans", [])]
    return f"{name}({', '.join(children)})" if children else name


def _mysql_shape(value: Any) -> list[str]:
    """Each table's access in the plan: `table:access_type[:key]`, in plan order."""
    found: list[str] = []
    if isinstance(value, dict):
        table = value.get("table_name")
        if table is not None and "access_type" in value:
            key = value.get("key")
            found.append(f"{table}:{value['access_type']}" + (f":{key}" if key else ""))
        for item in value.values():
            found += _mysql_shape(item)
    elif isinstance(value, list):
        for item in value:
            found += _mysql_shape(item)
    return found


def shape_of(dialect: Dialect, plan: str) -> str:
    data = json.loads(plan)
    if dialect is Dialect.MYSQL:
        return " ".join(_mysql_shape(data)) or "no table"
    root = data[0]["Plan"] if isinstance(data, list) and data else {}
    return _pg_shape(root)


def _pg_plan(session: Rows, text: str, slot: int) -> str:
    count = max((int(n) for n in _PG_PARAMETER.findall(text)), default=0)
    name = f"dbscale_explain_{slot}"
    session.rows(f"PREPARE {name} AS {text}")
    try:
        args = f"({', '.join(['NULL'] * count)})" if count else ""
        [[plan]] = session.rows(f"EXPLAIN (FORMAT JSON) EXECUTE {name}{args}")
        return str(plan)
    finally:
        session.rows(f"DEALLOCATE {name}")


def _mysql_plan(session: Rows, text: str) -> str:
    # Distinct values (a range stays a range), and `SUM (` as `SUM(` (a digest's spacing).
    counter = iter(range(1000, 10**9, 1000))
    literal = re.sub(r"\?", lambda _: str(next(counter)), text.replace("(...)", "(?)"))
    literal = re.sub(r"(\w)\s+\(", r"\1(", literal)
    [[plan]] = session.rows(f"EXPLAIN FORMAT=JSON {literal}")
    return str(plan)


def explain_all(
    session: Rows, dialect: Dialect, statements: Iterable[tuple[str, float]]
) -> tuple[dict[str, Plan], list[str]]:
    """{fingerprint: plan} of the top plannable statements (full text, total ms), and what
    failed."""
    plans: dict[str, Plan] = {}
    failed: list[str] = []
    ranked = sorted(statements, key=lambda s: -s[1])
    chosen = [text for text, _ in ranked if _PLANNABLE.match(text)][:EXPLAINED]
    if dialect is Dialect.POSTGRESQL and chosen:
        session.rows("SET plan_cache_mode = force_generic_plan")
    for slot, text in enumerate(chosen):
        try:
            if dialect is Dialect.MYSQL:
                plan = _mysql_plan(session, text)
            else:
                plan = _pg_plan(session, text, slot)
            plans[fingerprint(text)] = Plan(plan[:PLAN_CHARS], shape_of(dialect, plan))
        except Exception as exc:  # one statement's plan; the others still count
            failed.append(f"{fingerprint(text)}: {' '.join(str(exc).split())[:200]}")
    return plans, failed
