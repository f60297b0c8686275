"""The layout's rules, checked on the code's own imports (every import statement, at module
level or inside a function): data flows one way, from the shared base through the engines
and the stages (ingest, analysis, render, synth) to the one sequencer and the front ends.

    base      case, mapping, schema, errors, formats, scratch, progress, version
    engines   the engine contract, DuckDB, Spark, the query loader
    stages    ingest/  analysis/  render/  synth/    (none imports another)
    pipeline  the one sequencer
    front     cli, notebook (all terminal and notebook presentation)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "forensics"
QUERIES = PACKAGE.parent / "queries"

BASE = {"case", "mapping", "schema", "errors", "formats", "scratch", "progress", "version"}
STAGES = {"ingest", "analysis", "render", "synth"}
LAYERS = {"base": 0, "engines": 1, "stage": 2, "pipeline": 3, "front": 4, "root": 5}
PRESENTATION = ("rich", "typer", "click")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, module: str) -> set[str]:
    """Every module `path` imports, absolute (relative imports resolved; `from a import b`
    counts as a.b when a.b is a module, else as a)."""
    known = _modules()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return found


def _unit(module: str) -> str:
    """The layer unit a module belongs to: a base module, `engines`, a stage, ..."""
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    return parts[1]


def _layer(unit: str) -> str:
    if unit in BASE:
        return "base"
    if unit == "engines":
        return "engines"
    if unit in STAGES:
        return "stage"
    if unit == "pipeline":
        return "pipeline"
    if unit in ("cli", "notebook"):
        return "front"
    if unit == "root":
        return "root"
    raise AssertionError(f"forensics.{unit} belongs to no layer: add it to the layout")


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {i for i in _imports(path, name) if i.startswith("forensics")}
        for name, path in modules.items()
    }


def test_every_module_belongs_to_a_layer():
    for module in _modules():
        _layer(_unit(module))


def test_imports_only_go_down_the_layers():
    for module, imported in _graph().items():
        here = _layer(_unit(module))
        for target in imported:
            there = _layer(_unit(target))
            if here == "root":
                continue  # forensics/__init__.py opens the notebook lazily
            assert LAYERS[there] <= LAYERS[here], f"{module} imports {target} ({there} layer)"


def test_no_stage_imports_a_sibling_stage():
    for module, imported in _graph().items():
        unit = _unit(module)
        if unit not in STAGES:
            continue
        for target in imported:
            other = _unit(target)
            assert other == unit or other not in STAGES, f"{module} imports {target}"


def test_base_modules_import_no_other_layer():
    for module, imported in _graph().items():
        if _unit(module) in BASE:
            for target in imported:
                assert _unit(target) in BASE, f"{module} imports {target}"


def test_presentation_libraries_only_in_the_front_ends():
    for module, path in _modules().items():
        if _layer(_unit(module)) == "front":
            continue
        for name in _imports(path, module):
            assert not name.startswith(PRESENTATION), f"{module} imports {name}"


def test_only_the_cli_imports_typer():
    for module, path in _modules().items():
        if module == "forensics.cli":
            continue
        assert not any(n.startswith("typer") for n in _imports(path, module)), module


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` (module -> modules it imports), or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done or node not in graph:
            return None
        for nxt in sorted(graph[node]):
            found = visit(nxt, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for node in sorted(graph):
        found = visit(node, [])
        if found:
            return found
    return None


def test_there_is_no_import_cycle():
    cycle = _find_cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _find_cycle(graph) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


_QUERY_NAME = re.compile(r"^([a-z_]+)/([a-z_]+)$")


def _query_names(path: Path) -> set[str]:
    """The `CONCEPT/NAME` strings in a module that name a file of queries/."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        text = node.value if isinstance(node, ast.Constant) else None
        named = isinstance(text, str) and _QUERY_NAME.match(text)
        if named and (QUERIES / f"{text}.sql").is_file():
            names.add(str(text))
    return names


def _owner(concept: str) -> str:
    """The module or package that owns queries/CONCEPT/: the one named CONCEPT."""
    modules = _modules()
    owners = [m for m in modules if m.rsplit(".", 1)[-1] == concept]
    assert len(owners) == 1, f"queries/{concept}/ has no single owner module: {owners}"
    return owners[0]


def test_every_query_folder_has_an_owner_module():
    for folder in sorted(p for p in QUERIES.iterdir() if p.is_dir()):
        assert list(folder.glob("*.sql")), f"{folder} is empty"
        _owner(folder.name)


def test_queries_of_a_concept_are_read_only_by_its_module():
    used = set()
    for module, path in _modules().items():
        for name in _query_names(path):
            owner = _owner(name.split("/")[0])
            assert module == owner or module.startswith(owner + "."), (
                f"{module} reads queries/{name}.sql, which belongs to {owner}"
            )
            used.add(name)
    unused = {f"{q.parent.name}/{q.stem}" for q in QUERIES.rglob("*.sql")} - used
    assert not unused, f"query files no module reads: {sorted(unused)}"


def test_case_tables_are_written_through_the_frame_writer():
    """No SQL creates or inserts into a case_* table row by row: the case file's values
    reach the engine as frames (`write_frame`), so they are data, never SQL text."""
    pattern = re.compile(r"(CREATE[^;]*TABLE|INSERT\s+INTO)\s+\"?(case_|notify_exclusions)", re.I)
    for sql in QUERIES.rglob("*.sql"):
        assert not pattern.search(sql.read_text(encoding="utf-8")), sql
    for path in PACKAGE.rglob("*.py"):
        assert not pattern.search(path.read_text(encoding="utf-8")), path
