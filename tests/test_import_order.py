"""The package's import order, enforced: each module imports only from its own package, the base
modules and the stages below it, so no import runs upwards and no import circle spans folders.
The order is docs/development.md's; a new package must be placed here before it can import."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "dbscale"

# Imported by anything; they import only each other.
BASE = {"errors", "values", "modes", "files", "interrupts", "redaction", "polling", "_core"}
# Bottom to top: a stage may import the stages before it.
STAGES = [
    {"core", "stats"},
    {"targets"},
    {"observe"},
    {"micro"},
    {"scaleout"},
    {"results"},
    {"ranking", "history"},
    {"verdicts"},
    {"plan"},
    {"run", "report"},
    {"capacity", "live"},
    {"cli", "testing"},
    {"__main__"},
]
LEVEL = {name: level for level, names in enumerate(STAGES) for name in names}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, first part below `dbscale`) of every `dbscale.*` import in the file."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "dbscale":
                names = [f"dbscale.{alias.name}" for alias in node.names]
        else:
            continue
        found += [(node.lineno, n.split(".")[1]) for n in names if n.startswith("dbscale.")]
    return found


def _owner(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py") if len(relative.parts) > 1 else relative.stem


def test_every_package_has_a_place_in_the_order() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert packages | modules <= BASE | set(LEVEL)


def test_no_import_runs_upwards() -> None:
    wrong: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "__init__.py":
            continue  # the public facade (`dbscale.load_results`) stands above everything
        owner = _owner(path)
        for line, target in _imports(path):
            if target == owner or target == "__version__":
                continue
            if owner in BASE:
                allowed = target in BASE
            else:
                allowed = target in BASE or LEVEL[target] < LEVEL[owner]
            if not allowed:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line}: {owner} imports {target}")
    assert wrong == []


def test_the_contract_room_imports_only_base_modules() -> None:
    for path in (PACKAGE / "core").glob("*.py"):
        for line, target in _imports(path):
            assert target in BASE | {"core"}, f"core/{path.name}:{line} imports {target}"


def test_the_check_finds_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text("from dbscale.report.page import write_page\nimport dbscale.core\n")
    assert _imports(module) == [(1, "report"), (2, "core")]


# The study runner's rooms, bottom first: a room imports only rooms below it (run/runner.py
# walks the steps; executor.py runs one; the summary, the gate, the load generators, the
# failure policy and the thresholds serve it; the console and progress pieces serve them all;
# watchers.py is what a watcher of the study (live/) is told).
RUN_ROOMS = [
    {"output_format", "sysbench_format", "data", "limits", "target_limits", "resume_checks",
     "study_output", "fault_driver", "micro_step"},
    {"console", "progress"},
    {"one_run", "watchers"},
    {"failure_policy", "study_summary", "target_gate", "load_generators", "thresholds"},
    {"executor"},
    {"runner"},
]  # fmt: skip
RUN_LEVEL = {name: level for level, names in enumerate(RUN_ROOMS) for name in names}


def _run_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each `dbscale.run.<module>` (or `from dbscale.run import m`) import."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "dbscale.run":
                found += [(node.lineno, alias.name) for alias in node.names]
            elif node.module.startswith("dbscale.run."):
                found.append((node.lineno, node.module.split(".")[2]))
    return found


def test_the_study_runners_rooms_import_downwards() -> None:
    rooms = {p.stem for p in (PACKAGE / "run").glob("*.py")} - {"__init__"}
    assert rooms == set(RUN_LEVEL), "place a new run/ module in RUN_ROOMS"
    wrong = [
        f"run/{path.name}:{line} imports run/{target}"
        for path in sorted((PACKAGE / "run").glob("*.py"))
        if path.stem != "__init__"
        for line, target in _run_imports(path)
        if RUN_LEVEL[target] >= RUN_LEVEL[path.stem]
    ]
    assert wrong == []


def test_a_capacity_search_depends_on_its_level_runner_not_on_the_study_runner() -> None:
    for path in (PACKAGE / "capacity").glob("*.py"):
        assert _run_imports(path) == [], f"capacity/{path.name} imports from run/"


def test_only_targets_url_reads_what_a_url_says() -> None:
    readers = {"urlsplit", "urlparse", "parse_qsl", "parse_qs", "unquote", "SplitResult"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "urllib.parse"
                and {alias.name for alias in node.names} & readers
            ):
                found.append(str(path.relative_to(PACKAGE)))
    assert sorted(set(found)) == ["redaction.py", "targets/url.py"]


def test_after_validation_the_plan_is_read_not_its_document() -> None:
    for name in ("matrix", "scripts", "faults", "workload_check", "study"):
        text = (PACKAGE / "plan" / f"{name}.py").read_text(encoding="utf-8")
        assert "PlanDocument" not in text, f"plan/{name}.py takes the document"
