"""The package's layers stay straight (DESIGN.md, "Modules stand on floors"): every import in src/,
at the top of a module or inside a function, goes to the same floor or one below, and no module
imports itself back through others."""

import ast
from pathlib import Path

import locsynth

ROOT = Path(locsynth.__file__).parent

#: each top-level module or package of locsynth, by floor (0 is the ground)
FLOORS = {
    0: {"locsynth", "errors", "validation", "rng", "ledger", "registry", "parallel", "plugins"},
    1: {"points", "space", "timeaxis", "io", "traces", "discretize", "simulate", "cab_trips", "graphs"},
    2: {"metrics", "privacy"},
    3: {"synth", "anonymize", "attacks", "suite"},
    4: {"report"},
    5: {"evaluate"},
    6: {"release", "contest", "info", "testing", "prepare", "lbs"},
    7: {"benchmark", "pipeline"},
    8: {"cli_common", "cli_contest", "cli"},
}
FLOOR = {part: floor for floor, parts in FLOORS.items() for part in parts}


def modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ("locsynth",) + path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports(name: str, path: Path, known: dict) -> set[str]:
    """Every locsynth module ``name`` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "locsynth":
                continue
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "locsynth"}
    return found


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "locsynth"


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {t for t in imports(name, path, known) if t != name} for name, path in known.items()}


def test_every_module_has_a_floor():
    assert {part(m) for m in modules()} - set(FLOOR) == set()


def test_no_import_goes_up_a_floor():
    upward = sorted(f"{m} (floor {FLOOR[part(m)]}) imports {t} (floor {FLOOR[part(t)]})"
                    for m, targets in graph().items() for t in targets if FLOOR[part(t)] > FLOOR[part(m)])
    assert upward == []


def test_no_module_imports_itself_back():
    g = graph()
    # a package's __init__ re-exporting its modules is not a circle of the code
    edges = {m: {t for t in ts if not m == t.rsplit(".", 1)[0]} for m, ts in g.items()}
    state, cycles = {}, []

    def visit(m, stack):
        state[m] = 1
        for t in sorted(edges.get(m, ())):
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t, stack + [t])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_no_two_parts_import_each_other():
    """Between top-level modules and packages too (io and trips, report and contest): one way only."""
    parts: dict[str, set[str]] = {}
    for m, targets in graph().items():
        parts.setdefault(part(m), set()).update(part(t) for t in targets if part(t) != part(m))
    both = sorted(f"{a} <-> {b}" for a, ts in parts.items() for b in ts if a < b and a in parts.get(b, ()))
    assert both == []


def test_io_returns_points_tables_only():
    """io knows nothing of TraceSet: it reads files into points tables (DESIGN.md)."""
    into = sorted(f"{m} imports {t}" for m, targets in graph().items() if part(m) == "io"
                  for t in targets if part(t) not in ("io", "errors", "points", "validation", "locsynth"))
    assert into == []


def test_no_function_is_longer_than_100_lines():
    long = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 100:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert long == []
