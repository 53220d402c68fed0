"""The package's import order, enforced: each module imports only from its own package, the base
modules and the stages below it, so no import runs upwards and no import circle spans folders.
The order is docs/development.md's; a new package must be placed here before it can import."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "dbscale"

# Imported by anything; they import only each other.
BASE = {"errors", "values", "modes", "files", "interrupts", "redaction", "_core"}
# Bottom to top: a stage may import the stages before it.
STAGES = [
    {"core", "stats"},
    {"targets"},
    {"observe"},
    {"micro"},
    {"scaleout"},
    {"results"},
    {"ranking", "history"},
    {"plan"},
    {"run", "report"},
    {"capacity"},
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
