"""The library never imports the CLI; only `forensics.cli` imports Typer."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "forensics"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            names.add(("." * node.level) + mod)
            names.update(("." * node.level) + mod + "." + a.name for a in node.names)
    return names


def test_library_modules_never_import_the_cli_or_typer():
    for path in PACKAGE.rglob("*.py"):
        if path.name == "cli.py":
            continue
        imported = _imports(path)
        assert not any(n.endswith("cli") or n.startswith("typer") for n in imported), path


def test_sql_lives_in_queries_folder():
    folder = PACKAGE.parent / "queries"
    queries = list(folder.rglob("*.sql"))
    assert queries, "analysis SQL belongs in queries/CONCEPT/NAME.sql"
    # one folder per concept, named like the module that runs it
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    for concept in {q.parent.name for q in queries}:
        assert concept in modules, concept
