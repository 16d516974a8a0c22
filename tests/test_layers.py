"""The package's layers stay straight (DESIGN.md, "Modules stand on floors"): every import in src/
goes to the same floor or one below, and no module imports itself back through others.

An import is any way a module names another: ``import`` and ``from ... import`` statements (at the
top of a module or inside a function), ``importlib.import_module`` / ``__import__`` calls with a
name written out (absolute, or relative to ``__name__`` / ``__package__``), and strings that name a
locsynth module, ``"locsynth.metrics.population"`` or ``"module:attribute"`` as in a table of
things loaded later. An ``import_module`` whose argument is computed must sit in one of
:data:`LOADERS`, each of which takes its names from such a table of strings.

:data:`FLOORS` is the one floor table: docs/ARCHITECTURE.md shows it, and a test here checks that
the page and this table agree.
"""

import ast
import functools
import re
from pathlib import Path

import locsynth

ROOT = Path(locsynth.__file__).parent
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md"

#: each top-level module or package of locsynth (``locsynth`` is the package's own __init__), by
#: floor (0 is the ground): floor -> (what stands there, its modules)
FLOORS = {
    0: ("ground", {"errors", "validation", "rng", "ledger", "parallel", "graphs", "version", "registry", "plugins", "progress",
                   "jsonable", "files", "geo"}),
    1: ("DP mechanisms", {"privacy"}),
    2: ("data model", {"points", "space", "timeaxis", "traces", "categories"}),
    3: ("counts", {"metrics"}),
    4: ("readers and preparation", {"io", "discretize", "cab_trips", "simulate", "prepare"}),
    5: ("methods, and the metric groups evaluate runs", {"synth", "anonymize", "attacks", "suite"}),
    6: ("pages", {"report"}),
    7: ("evaluation", {"evaluate"}),
    8: ("steps", {"release", "contest", "info", "testing", "lbs"}),
    9: ("the benchmark", {"benchmark"}),
    10: ("the demo", {"pipeline"}),
    11: ("commands", {"cli_common", "cli_contest", "cli"}),
    12: ("the package's face", {"locsynth"}),
}
FLOOR = {part: floor for floor, (_, parts) in FLOORS.items() for part in parts}

#: the one table of upward names allowed: the registry's built-in methods (registry.py says why)
REGISTRY, REGISTRY_TABLE = "locsynth.registry", "BUILT_IN"

#: modules whose ``import_module`` takes a computed name, each from a table of full module names in
#: the same file (read by :func:`imports`)
LOADERS = {
    "locsynth": "the data model's classes (_DATA_MODEL), the methods through the registry",
    "locsynth.metrics": "each metric's module (_HOMES)",
    "locsynth.suite": "the built-in metric groups (BUILT_IN)",
    "locsynth.plugins": "modules outside locsynth that LOCSYNTH_PLUGINS or entry points name",
    "locsynth.registry": "the methods (BUILT_IN)",
    "locsynth.cli_common": "click's own modules, from typer's copy of click or click itself (not locsynth)",
}

#: arrows known to run the wrong way, with the issue that removes them: each must still exist (so
#: that the entry goes when the arrow does), and none other is allowed
KNOWN: set = set()

IMPORTERS = {"import_module", "__import__"}


def sources(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    """Every module of the package: dotted name -> (source text, whether it is a package __init__)."""
    out = {}
    for path in root.rglob("*.py"):
        parts = ("locsynth",) + path.relative_to(root).with_suffix("").parts
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path.read_text(), package)
    return out


SOURCES = sources()


@functools.lru_cache(maxsize=None)
def parse(source: str) -> ast.Module:
    """The syntax tree of ``source``, parsed once (the tests only read it)."""
    return ast.parse(source)


def _is_importer(call: ast.Call) -> bool:
    f = call.func
    return (isinstance(f, ast.Name) and f.id in IMPORTERS) or (isinstance(f, ast.Attribute) and f.attr in IMPORTERS)


def _resolve(relative: str, anchor: str) -> str:
    """``import_module(".x", anchor)``: the name relative to the package ``anchor``."""
    level = len(relative) - len(relative.lstrip("."))
    base = anchor.split(".")[:len(anchor.split(".")) - level + 1]
    rest = relative[level:]
    return ".".join(base + ([rest] if rest else []))


def _table(tree: ast.Module) -> ast.stmt | None:
    """The registry's declared table: the assignment of ``BUILT_IN`` at the top of registry.py."""
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == REGISTRY_TABLE for t in targets):
            return node
    return None


def imports(name: str, source: str, package: bool, known, index: bool = True) -> set[str]:
    """Every locsynth module ``name`` names, anywhere in its file (see the module docstring).
    ``index=False`` leaves out names (strings, ``import_module``) of modules in ``name``'s own part:
    a table of the package's own modules loaded later is its index, not a circle of the code."""
    anchor = name if package else name.rsplit(".", 1)[0]
    tree = parse(source)
    table = _table(tree) if name == REGISTRY else None
    skip = {id(n) for n in ast.walk(table)} if table is not None else set()   # read apart, by declared()
    found = set()

    def add(target: str, named: bool = True) -> None:
        if target.split(".")[0] == "locsynth" and (index or not named or part(target) != part(name)):
            found.add(target)

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            target = _resolve("." * node.level + (node.module or ""), anchor) if node.level else node.module or ""
            for alias in node.names:
                add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target, named=False)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, named=False)
        elif isinstance(node, ast.Call) and _is_importer(node) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if first.value.startswith("."):
                    where = node.args[1] if len(node.args) > 1 else None
                    if isinstance(where, ast.Name) and where.id in ("__name__", "__package__"):
                        add(_resolve(first.value, name if where.id == "__name__" else anchor))
                    elif isinstance(where, ast.Constant) and isinstance(where.value, str):
                        add(_resolve(first.value, where.value))
                else:
                    add(first.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            module = node.value.split(":", 1)[0]
            if "." in module and module in known and (module == node.value or
                                                      re.fullmatch(r"[\w.]+:\w+", node.value)):
                add(module)
    return found


def dynamic(name: str, source: str) -> list[str]:
    """The lines of ``name`` that call ``import_module`` (or ``__import__``) on a computed name."""
    return [f"{name}:{node.lineno}" for node in ast.walk(parse(source))
            if isinstance(node, ast.Call) and _is_importer(node) and node.args
            and not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str))]


def declared(source: str) -> list[tuple[str, str]]:
    """The (module, class) of every entry of the registry's table."""
    table = _table(parse(source))
    return [] if table is None else [(call.args[1].value, call.args[2].value) for call in ast.walk(table.value)
                                     if isinstance(call, ast.Call) and len(call.args) >= 3]


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "locsynth"


def graph(src: dict[str, tuple[str, bool]] = SOURCES, known_exceptions=KNOWN, index: bool = True
          ) -> dict[str, set[str]]:
    """module -> the locsynth modules it imports (itself and the :data:`KNOWN` arrows left out;
    ``index``: see :func:`imports`)."""
    out = {}
    for name, (source, package) in src.items():
        targets = {t for t in imports(name, source, package, src, index) if t != name}
        out[name] = {t for t in targets if (name, t) not in known_exceptions}
    return out


def upward(g: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} (floor {FLOOR[part(m)]}) imports {t} (floor {FLOOR[part(t)]})"
                  for m, targets in g.items() for t in targets if FLOOR[part(t)] > FLOOR[part(m)])


def test_every_module_has_a_floor_and_every_floor_names_modules_that_exist():
    present = {part(m) for m in SOURCES}
    assert present - set(FLOOR) == set()
    assert set(FLOOR) - present == set()


def test_no_import_goes_up_a_floor():
    assert upward(graph()) == []


def test_a_planted_import_up_a_floor_fails():
    """What the test reads: an import_module string (absolute or relative), a "module:attr" string
    and a name in the registry outside its declared table each count as an import; unchanged
    sources pass."""
    assert upward(graph(SOURCES)) == []
    plants = {
        "locsynth.space": ('import importlib\n\n\ndef _up():\n    return importlib.import_module('
                           '"locsynth.synth.ppmtf.model")\n', "locsynth.synth.ppmtf.model (floor 5)"),
        "locsynth.traces": ('from importlib import import_module\n\n\ndef _up():\n    return import_module('
                            '".evaluate", __package__)\n', "locsynth.evaluate (floor 7)"),
        "locsynth.metrics.visits": ('LATER = {"trips": "locsynth.cab_trips:make_trips"}\n',
                                    "locsynth.cab_trips (floor 4)"),
        "locsynth.benchmark": ('def _up():\n    from .pipeline import run_demo\n\n    return run_demo\n',
                               "locsynth.pipeline (floor 10)"),
        "locsynth.registry": ('EXTRA = ("locsynth.contest.defence", "KMeansDefence")\n',
                              "locsynth.contest.defence (floor 8)"),
    }
    for module, (code, expected) in plants.items():
        source, package = SOURCES[module]
        planted = {**SOURCES, module: (source + "\n\n" + code, package)}
        found = upward(graph(planted))
        assert len(found) == 1 and found[0].startswith(f"{module} (floor") and found[0].endswith(expected), found


def test_the_registry_table_names_classes_that_exist():
    """The one allowed table of upward names: each entry is a module of the package that defines
    (or imports) its class."""
    entries = declared(SOURCES[REGISTRY][0])
    assert len(entries) >= 17
    for module, cls in entries:
        assert module in SOURCES, module
        tree = parse(SOURCES[module][0])
        names = {n.name for n in tree.body if isinstance(n, ast.ClassDef)} | \
                {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
        assert cls in names, f"{module} has no class {cls}"


def test_every_computed_import_reads_a_declared_table():
    calls = sorted(line for name, (source, _) in SOURCES.items() for line in dynamic(name, source))
    assert {line.split(":")[0] for line in calls} <= set(LOADERS), calls
    planted = SOURCES["locsynth.space"][0] + "\n\ndef _up(name):\n    import importlib\n\n" \
                                             "    return importlib.import_module(f'locsynth.{name}')\n"
    assert [line.split(":")[0] for line in dynamic("locsynth.space", planted)] == ["locsynth.space"]


def test_the_known_arrows_still_exist():
    """A KNOWN arrow that is gone must leave the table (so that it cannot come back unseen)."""
    everything = graph(known_exceptions=set())
    assert {(m, t) for m, t in KNOWN if t not in everything.get(m, ())} == set()


def test_no_module_imports_itself_back():
    # a package's index of its own modules (metrics.groups.BUILT_IN, metrics' _HOMES) and a
    # package's __init__ re-exporting its modules are not circles of the code
    g = graph(index=False)
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
                  for t in targets if part(t) not in ("io", "errors", "points", "validation"))
    assert into == []


def architecture_floors(text: str) -> dict[int, tuple[str, set[str]]]:
    """The floor table of docs/ARCHITECTURE.md: ``| 0 ground | `errors`, ... |`` rows, the modules
    in backquotes outside parentheses."""
    section = text.split("## Floors", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"(\d+) (.+)", cells[0]) if len(cells) >= 2 else None
        if match:
            listed = re.sub(r"\([^)]*\)", "", cells[1])            # what parentheses say is not a module
            names = {re.sub(r"(/|\.py|/__init__\.py)$", "", n) for n in re.findall(r"`([^`]+)`", listed)}
            out[int(match.group(1))] = (match.group(2), names)
    return out


def test_architecture_shows_this_floor_table():
    assert architecture_floors(ARCHITECTURE.read_text()) == FLOORS


def test_no_function_is_longer_than_100_lines():
    long = []
    for name, (source, _) in SOURCES.items():
        for node in ast.walk(parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 100:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert long == []
