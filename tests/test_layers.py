"""The package's layers stay straight (DESIGN.md, "Modules stand on floors"): the folders of
src/locsynth are the floors, every import goes to the same floor or one below, inside a folder to
the same storey or one below, and no module imports itself back through others.

An import is any way a module names another: ``import`` and ``from ... import`` statements (at the
top of a module or inside a function), ``importlib.import_module`` / ``__import__`` calls with a
name written out (absolute, or relative to ``__name__`` / ``__package__``), and strings that name a
locsynth module, ``"locsynth.metrics.population"`` or ``"module:attribute"`` as in a table of
things loaded later. An ``import_module`` whose argument is computed must sit in one of
:data:`LOADERS`, each of which takes its names from such a table of strings.

:data:`FLOORS` and :data:`STOREYS` are the one floor table: docs/ARCHITECTURE.md shows them, and a
test here checks that the page and these tables agree.
"""

import ast
import functools
import re
from pathlib import Path

import locsynth

ROOT = Path(locsynth.__file__).parent
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md"

#: each folder of locsynth (and each module left on the top level; ``locsynth`` is the package's
#: own __init__), by floor (0 is the ground): floor -> (what stands there, its folders)
FLOORS = {
    0: ("ground", {"core"}),
    1: ("privacy", {"privacy"}),
    2: ("data", {"data"}),
    3: ("metrics", {"metrics"}),
    4: ("methods and attacks", {"synth", "anonymize", "attacks"}),
    5: ("evaluation", {"evaluation"}),
    6: ("steps", {"release", "contest", "lbs", "testing"}),
    7: ("benchmark", {"benchmark"}),
    8: ("commands", {"cli"}),
    9: ("the package's face", {"locsynth"}),
}
FLOOR = {part: floor for floor, (_, parts) in FLOORS.items() for part in parts}

#: inside a folder, its modules and sub-folders on storeys (lowest first) where some must not
#: import others; what a folder's storeys do not list stands above them, and the folder's own
#: __init__ above all (it may gather its modules, as synth's exports the methods), and __main__ above that
STOREYS = {
    "data": [("the data model", {"points", "space", "timeaxis", "modes", "traces", "categories", "export"})],
    "synth": [("the registry", {"registry"}), ("the protocol", {"base", "trip_times"})],
    "evaluation": [("the metric groups", {"suite"}), ("the pages", {"report"})],
    "release": [("the release", {"publish"})],
    "benchmark": [("the benchmark's runs", {"runs"})],
    "cli": [("the shared helpers", {"common"}), ("the root command", {"root"})],
}
#: the top level: the package's face and the few modules that stand beside the folders
TOP_LEVEL = {"testing"}

#: the one table of upward names allowed: the registry's built-in methods (synth/registry.py says why)
REGISTRY, REGISTRY_TABLE = "locsynth.synth.registry", "BUILT_IN"

#: modules whose ``import_module`` takes a computed name, each from a table of full module names in
#: the same file (read by :func:`imports`)
LOADERS = {
    "locsynth": "the data model's classes (_DATA_MODEL), the methods through the registry",
    "locsynth.metrics": "each metric's module (_HOMES)",
    "locsynth.evaluation.suite": "the built-in metric groups (BUILT_IN)",
    "locsynth.core.plugins": "modules outside locsynth that LOCSYNTH_PLUGINS or entry points name",
    "locsynth.synth.registry": "the methods (BUILT_IN)",
    "locsynth.cli.common": "click's own modules, from typer's copy of click or click itself (not locsynth)",
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
    """The registry's declared table: the assignment of ``BUILT_IN`` at the top of synth/registry.py."""
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
            own_folder = node.value == f"locsynth.{part(name)}"   # a format's tag, as "locsynth.release"
            if "." in module and module in known and not own_folder and (
                    module == node.value or re.fullmatch(r"[\w.]+:\w+", node.value)):
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
    """The folder (or top-level module) a module stands in: what :data:`FLOORS` lists."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "locsynth"


def storey(module: str) -> int:
    """The storey of ``module`` in its folder: the :data:`STOREYS` entry that lists its module or
    sub-folder, above them all when none does, the folder's own __init__ above that and its
    __main__ (``python -m``, which runs the package) at the top."""
    pieces, levels = module.split("."), STOREYS.get(part(module), [])
    if len(pieces) <= 2:
        return len(levels) + 1
    if pieces[2] == "__main__":
        return len(levels) + 2
    return next((i for i, (_, names) in enumerate(levels) if pieces[2] in names), len(levels))


def where(module: str) -> str:
    return f"floor {FLOOR[part(module)]}" + (f", storey {storey(module)}" if part(module) in STOREYS else "")


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
    """Every import up a floor, or up a storey inside a folder."""
    return sorted(f"{m} ({where(m)}) imports {t} ({where(t)})" for m, targets in g.items() for t in targets
                  if FLOOR[part(t)] > FLOOR[part(m)] or (part(t) == part(m) and storey(t) > storey(m)))


def test_every_module_has_a_floor_and_every_floor_names_modules_that_exist():
    present = {part(m) for m in SOURCES}
    assert present - set(FLOOR) == set()
    assert set(FLOOR) - present == set()
    for folder, levels in STOREYS.items():
        inside = {m.split(".")[2] for m in SOURCES if part(m) == folder and m.count(".") >= 2}
        assert set().union(*(names for _, names in levels)) <= inside, folder


def test_the_top_level_is_the_face_and_few_modules():
    """Every module but the package's face and :data:`TOP_LEVEL` stands in a folder named after its
    floor's part."""
    top = {p.stem for p in ROOT.glob("*.py")} - {"__init__"}
    assert top == TOP_LEVEL and len(top) <= 5
    folders = set(FLOOR) - TOP_LEVEL - {"locsynth"}
    assert all((ROOT / folder / "__init__.py").is_file() for folder in folders)


def test_no_import_goes_up_a_floor():
    assert upward(graph()) == []


#: module -> (code added to it, the one upward import the test must then report)
PLANTS = [
    # across folders
    ("locsynth.data.space", 'import importlib\n\n\ndef _up():\n    return importlib.import_module('
                            '"locsynth.synth.ppmtf.model")\n', "locsynth.synth.ppmtf.model (floor 4, storey 2)"),
    ("locsynth.privacy.ledger", "def _up():\n    from ..data.traces import TraceSet\n\n    return TraceSet\n",
     "locsynth.data.traces (floor 2, storey 0)"),
    ("locsynth.metrics.visits", 'LATER = {"groups": "locsynth.evaluation.suite:groups"}\n',
     "locsynth.evaluation.suite (floor 5, storey 0)"),
    ("locsynth.synth.registry", 'EXTRA = ("locsynth.contest.defence", "KMeansDefence")\n',
     "locsynth.contest.defence (floor 6)"),
    # inside a folder
    ("locsynth.data.traces", 'from importlib import import_module\n\n\ndef _up():\n    return import_module('
                             '".prepare", __package__)\n', "locsynth.data.prepare (floor 2, storey 1)"),
    ("locsynth.evaluation.suite", "def _up():\n    from .report.html import render_html\n\n    return render_html\n",
     "locsynth.evaluation.report.html (floor 5, storey 1)"),
    ("locsynth.synth.registry", "def _up():\n    from .base import Synthesizer\n\n    return Synthesizer\n",
     "locsynth.synth.base (floor 4, storey 1)"),
    ("locsynth.benchmark.runs", "def _up():\n    from .demo import run_demo\n\n    return run_demo\n",
     "locsynth.benchmark.demo (floor 7, storey 1)"),
    ("locsynth.cli.common", "def _up():\n    from .root import app\n\n    return app\n", "locsynth.cli.root (floor 8, storey 1)"),
    ("locsynth.cli.root", "def _up():\n    from . import methods\n\n    return methods\n",
     "locsynth.cli.methods (floor 8, storey 2)"),
]


def test_a_planted_import_up_a_floor_or_a_storey_fails():
    """What the test reads: an import_module string (absolute or relative), a "module:attr" string,
    an import inside a function and a name in the registry outside its declared table each count
    as an import, across folders and inside one; unchanged sources pass."""
    assert upward(graph(SOURCES)) == []
    for module, code, expected in PLANTS:
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
    planted = SOURCES["locsynth.data.space"][0] + "\n\ndef _up(name):\n    import importlib\n\n" \
                                             "    return importlib.import_module(f'locsynth.{name}')\n"
    assert [line.split(":")[0] for line in dynamic("locsynth.data.space", planted)] == ["locsynth.data.space"]


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
    allowed = ("locsynth.data.io", "locsynth.core.errors", "locsynth.data.points", "locsynth.core.validation")
    into = sorted(f"{m} imports {t}" for m, targets in graph().items() if m.startswith("locsynth.data.io")
                  for t in targets if not any(t == a or t.startswith(a + ".") for a in allowed))
    assert into == []


def architecture_floors(text: str) -> dict[int, tuple[str, set[str]]]:
    """The floor table of docs/ARCHITECTURE.md: ``| 0 ground | `core/` (...) |`` rows, the folders
    in backquotes outside parentheses."""
    out = {}
    for cells in _rows(text):
        match = re.fullmatch(r"(\d+) (.+)", cells[0])
        if match:
            out[int(match.group(1))] = (match.group(2), _names(cells[1]))
    return out


def architecture_storeys(text: str) -> dict[str, list[tuple[str, set[str]]]]:
    """The storey table of docs/ARCHITECTURE.md: ``| `data/` 0 the data model | `points`, ... |``."""
    out: dict[str, list] = {}
    for cells in _rows(text):
        match = re.fullmatch(r"`(\w+)/` (\d+) (.+)", cells[0])
        if match:
            levels = out.setdefault(match.group(1), [])
            assert int(match.group(2)) == len(levels), cells
            levels.append((match.group(3), _names(cells[1])))
    return out


def _rows(text: str) -> list[list[str]]:
    section = text.split("## Floors", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()]
    return [cells for cells in rows if len(cells) >= 2]


def _names(cell: str) -> set[str]:
    listed = re.sub(r"\([^)]*\)", "", cell)                  # what parentheses say is not a module
    return {re.sub(r"(/|\.py|/__init__\.py)$", "", n) for n in re.findall(r"`([^`]+)`", listed)}


def test_architecture_shows_this_floor_table():
    text = ARCHITECTURE.read_text()
    assert architecture_floors(text) == FLOORS
    assert architecture_storeys(text) == STOREYS


def test_no_function_is_longer_than_100_lines():
    long = []
    for name, (source, _) in SOURCES.items():
        for node in ast.walk(parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 100:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert long == []


def test_every_command_module_is_under_300_lines():
    """One module per group of commands (cli/), each small enough to read whole; what they share is
    cli/common.py's."""
    modules = [p for p in (ROOT / "cli").glob("*.py") if p.stem not in ("__init__", "__main__", "common", "root")]
    assert len(modules) >= 6
    assert {p.name: n for p in modules if (n := len(p.read_text().splitlines())) >= 300} == {}
