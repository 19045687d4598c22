"""The package's layers point one way: each module imports only from layers below its own (or
from its own package), as docs/how-it-works.md lists them. A new import that points up, or
a cycle between two packages, fails here with the import that does it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pipelines"

LAYERS: list[set[str]] = [
    {"__init__", "errors", "durable", "stop", "sqlfiles", "resource_names"},  # shared basics
    {"config", "listening"},  # the settings; serving HTTP on loopback
    {"protojson"},  # proto3 JSON: any depth, times, enums, the schema error
    {"transform"},  # JSON in, Arrow out
    {"ces", "ces.simulator"},  # the CES source: client, tools, records, simulator
    {"lake"},
    {"warehouse"},
    {"ingest"},  # fetch, flatten, load: plain steps
    {"report", "serve"},  # the dashboard and the MCP server read the warehouse
    {"orchestration"},
    {"definitions"},
    {"cli"},
]
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def _unit(parts: tuple[str, ...]) -> str:
    """The layer unit of a module path below `pipelines` (the simulator counts on its own)."""
    if parts[:2] == ("ces", "simulator"):
        return "ces.simulator"
    return parts[0].removesuffix(".py")


def _module_or_init(name: str) -> str:
    """`from pipelines import name`: a module of the package, or a name its `__init__` defines."""
    return name if (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file() else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, unit) of every `pipelines` module that `path` imports, at any place in it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "pipelines":
            names = [f"pipelines.{_module_or_init(alias.name)}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, _unit(tuple(n.split(".")[1:]))) for n in names if n.startswith("pipelines.")]
    return found


def test_every_import_points_to_a_lower_layer() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit(path.relative_to(PACKAGE).parts)
        assert unit in RANK, f"{path.relative_to(PACKAGE)} is in no layer: add its package to LAYERS"
        for line, imported in _imports(path):
            assert imported in RANK, f"{path.relative_to(PACKAGE)}:{line} imports {imported}, in no layer"
            if imported != unit and RANK[imported] >= RANK[unit]:
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({unit}) imports {imported}")
    assert not upward, "imports pointing up or sideways:\n" + "\n".join(upward)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from pipelines.warehouse.duck import Warehouse\nimport pipelines.protojson.deepjson\n")
    assert _imports(module) == [(1, "warehouse"), (2, "protojson")]
