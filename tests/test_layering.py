"""The package's import graph keeps the data flow's direction.

Every module of ``src/faithprobe`` belongs to one layer of the data flow; a module may import
from its own layer or from a lower one, never from a higher one, and no group of modules
imports each other in a cycle. A folder (a top-level package) lies in one layer, and the
folders' own graph has no cycle either: no arrow between folders points back up. Both rules are read from the source (``ast``, every import
statement, also those inside functions), so the test needs no imports of the package
itself. A new top-level module or package must be given a layer here: the test fails
until it is.

An import by name (``importlib.import_module("faithprobe.x")``, ``import_submodules``, a
``"faithprobe.x:attribute"`` target loaded on first use, a pkgutil prefix) points the same
way as an import statement and may not point up either: every string a module holds that
names a project module counts, wherever it is used, so an alias of ``import_module`` or a
name kept in a variable does not hide the arrow. Such lazy imports are how registries
avoid import cycles, so they are left out of the cycle checks.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# lowest first; a module's layer is that of the longest prefix naming it
LAYERS: dict[str, tuple[str, ...]] = {
    "foundation": (
        "faithprobe",
        "faithprobe.errors",
        "faithprobe.registry",
        "faithprobe.numbers",  # the one check of a number a user gives
        "faithprobe.options",
        "faithprobe.seeding",
        "faithprobe.atomic",
        "faithprobe.json_values",  # JSON whose every value faithprobe can use and write
        "faithprobe.paths",  # the one check of a path a user gives
        "faithprobe.urls",
        "faithprobe.markdown",
        "faithprobe.console",
        "faithprobe.subcommands",  # what the command groups share
        "faithprobe.quiet",  # third-party warnings kept off the console
        "faithprobe.records",
        "faithprobe.examples",  # the old name of records, kept for plug-ins
        "faithprobe.sentences",
        "faithprobe.parsing",  # spaCy's full small pipeline, loaded once
        "faithprobe.content_words",  # the lexical heuristics' words
        "faithprobe.multiple_choice_prompts",
    ),
    "data": (
        "faithprobe.datasets",
        "faithprobe.catalog",  # the data sets by name: where they are, fetching them
        "faithprobe.qa",  # questions, prompts and answers as text
    ),
    "interventions": (
        "faithprobe.expectations",
        "faithprobe.interventions",
        "faithprobe.coreference",
        "faithprobe.generators",
    ),
    "requests": (
        "faithprobe.requests",
        "faithprobe.asking",  # the requests a question is asked as, its answer read back
        "faithprobe.saliency",  # saliency answers read as words, the right reasons' words
    ),
    "subjects": (
        "faithprobe.subjects",  # the interface, the spec, backends/, hf/, gguf/, endpoint/
        "faithprobe.serving",
    ),
    "baselines": (
        "faithprobe.heuristics",  # the shallow QA heuristics, answering as subjects
        "faithprobe.reference_models",  # reference models with planted behaviour (ref:)
    ),
    "runner": (
        "faithprobe.suite_protocol",
        "faithprobe.suite",  # the old name of suite_protocol, kept for plug-ins
        "faithprobe.output_folders",
        "faithprobe.executors",
        "faithprobe.runner",
    ),
    "metrics": ("faithprobe.metrics",),
    "report": ("faithprobe.report",),
    "suites": ("faithprobe.suites",),
    "clients": (
        "faithprobe.training",
        "faithprobe.representations",
        "faithprobe.baseline",  # faithprobe baseline: the heuristics scored like a suite
        "faithprobe.audit",  # every suite at a budget, one card
        "faithprobe.cli",
    ),
}
RANK = {prefix: i for i, prefixes in enumerate(LAYERS.values()) for prefix in prefixes}
NAMES = list(LAYERS)


def modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / "faithprobe").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def layer(module: str) -> int:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if (prefix := ".".join(parts[:n])) in RANK:
            return RANK[prefix]
    raise AssertionError(f"{module} has no layer: add it to LAYERS in {__file__}")


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports (``from package import name`` counts as
    importing the submodule where ``name`` is one)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in mods.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]  # fmt: skip
            else:
                continue
            if missing := [t for t in targets if t.startswith("faithprobe") and t not in mods]:
                graph[module].add(f"<unresolved {', '.join(missing)}>")
            graph[module] |= {t for t in targets if t in mods and t != module}
    return graph


# a text naming a project module: "faithprobe.x.y", a "faithprobe.x.y:attribute" target, or
# the "faithprobe.x." prefix pkgutil is given for the modules below faithprobe.x
MODULE_NAME = re.compile(r"faithprobe(?:\.[A-Za-z_]\w*)+\.?(?::[\w.]+)?")
# texts that spell a module's name without meaning an import of it, by the module holding them
NOT_IMPORTS = {"faithprobe.registry": {"faithprobe.suites"}}  # the suites' entry-point group


def texts(tree: ast.AST) -> Iterator[str]:
    """Every text ``tree`` holds but its docstrings (and other bare string statements): each
    string constant, and each text joined with ``+`` from constants."""
    skip = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    for node in ast.walk(tree):  # a sum before its pieces
        if id(node) in skip or (text := joined(node)) is None:
            continue
        skip |= {id(piece) for piece in ast.walk(node)}  # a piece of a name is no name
        yield text


def joined(node: ast.AST) -> str | None:
    """The text ``node`` stands for if it is a string constant or a sum of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = joined(node.left), joined(node.right)
        return None if left is None or right is None else left + right
    return None


def named_in(tree: ast.AST, mods: dict[str, Path]) -> set[str]:
    """The project modules the texts of ``tree`` name (:data:`MODULE_NAME`; for a name
    below a module, such as ``faithprobe.x.Class``, the module). The package root is left
    out: ``faithprobe.json`` is a file's name, and every module may read the version."""
    found = set()
    for text in texts(tree):
        if MODULE_NAME.fullmatch(text):
            parts = text.partition(":")[0].rstrip(".").split(".")
            prefixes = (".".join(parts[:n]) for n in range(len(parts), 1, -1))
            if (module := next((m for m in prefixes if m in mods), None)) is not None:
                found.add(module)
    return found


def imports_by_name(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the other project modules it names in a text (:func:`named_in`), but those
    :data:`NOT_IMPORTS` excuses."""
    graph = {}
    for module, path in mods.items():
        named = named_in(ast.parse(path.read_text(encoding="utf-8")), mods)
        graph[module] = named - {module} - NOT_IMPORTS.get(module, set())
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def graph():
    return imports(modules())


def test_every_module_has_a_layer():
    for module in modules():
        layer(module)


def test_every_project_import_resolves(graph):
    """An import the graph cannot place (a relative import gone wrong after a move) would
    hide an edge from the checks below."""
    assert [(m, t) for m, targets in graph.items() for t in targets if t.startswith("<")] == []


def test_no_import_cycles(graph):
    assert cycles(graph) == []


def upward(graph: dict[str, set[str]]) -> list[str]:
    """The arrows of ``graph`` that point from a layer up to a higher one."""
    return sorted(
        f"{a} ({NAMES[layer(a)]}) -> {b} ({NAMES[layer(b)]})"
        for a, targets in graph.items()
        for b in targets
        if not b.startswith("<") and layer(b) > layer(a)
    )


def test_no_import_points_up_the_data_flow(graph):
    assert upward(graph) == []


def test_no_import_by_name_points_up_the_data_flow():
    assert upward(imports_by_name(modules())) == []


def folder(module: str) -> str:
    """The top-level package (or module) ``module`` lies in: ``faithprobe.subjects`` for
    ``faithprobe.subjects.hf.causal``."""
    return ".".join(module.split(".")[:2])


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """folder -> the folders it imports from (the package root, ``faithprobe/__init__``,
    left out: every folder may read the version)."""
    out: dict[str, set[str]] = defaultdict(set)
    for a, targets in graph.items():
        for b in targets:
            if not b.startswith("<") and folder(a) != folder(b) and b != "faithprobe":
                out[folder(a)].add(folder(b))
    return out


def test_no_folder_straddles_layers():
    """A folder is one room of one layer: its modules all share its layer (no package with
    one module in the data layer and another among the requests)."""
    straddling = sorted(
        f"{m} ({NAMES[layer(m)]}) in {folder(m)} ({NAMES[layer(folder(m))]})"
        for m in modules()
        if m != "faithprobe" and layer(m) != layer(folder(m))
    )
    assert straddling == []


def test_no_arrow_between_folders_points_back(graph):
    """The folders' graph has no cycle: if ``interventions/`` imports ``generators/``, no
    module of ``generators/`` imports ``interventions/``."""
    assert cycles(folder_graph(graph)) == []


BACKEND_MODULES = ("faithprobe.subjects.backends", "faithprobe.heuristics.backend",
                   "faithprobe.reference_models.backend")  # fmt: skip
HEAVY = ("torch", "transformers", "captum", "openai", "numpy", "pandas", "spacy", "ray")


def top_level_imports(path: Path) -> set[str]:
    """What a module imports when it is imported (not inside a function): the modules named
    and, for ``from M import N``, ``M.N`` too (N may be a submodule)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


def imported_on_import(module: str, mods: dict[str, Path]) -> set[str]:
    """Every module importing ``module`` imports, following the project's own modules
    (with their parent packages) through their top-level imports."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:n]) for n in range(1, len(parts)) if ".".join(parts[:n]) in mods]
        if name in mods:
            todo += sorted(top_level_imports(mods[name]))
    return seen


def test_backend_modules_import_nothing_heavy():
    """A backend module only declares its backend (prefix, settings, checks, how it loads):
    ``faithprobe list`` and every ``--model`` check import all of them, so the model code
    (torch, transformers, the HTTP client) must wait for its loader, when a model loads."""
    mods = modules()
    backends = [m for m in mods if m.startswith(BACKEND_MODULES)]
    assert len(backends) == 12  # ten backends, _hub and the package
    heavy = sorted(
        f"{m} imports {name}"
        for m in backends
        for name in imported_on_import(m, mods)
        if name.split(".")[0] in HEAVY
    )
    assert heavy == []


def test_the_checks_can_fail():
    """A made-up graph with a cycle and an upward import is caught by both checks."""
    made_up = {"faithprobe.requests": {"faithprobe.runner"}, "faithprobe.runner":
               {"faithprobe.requests"}}  # fmt: skip
    assert cycles(made_up) == [["faithprobe.requests", "faithprobe.runner"]]
    assert layer("faithprobe.runner") > layer("faithprobe.requests")
    assert layer("faithprobe.suites.toy.suite") == NAMES.index("suites")
    two_folders = {"faithprobe.interventions.a": {"faithprobe.generators.b"},
                   "faithprobe.generators.c": {"faithprobe.interventions.d"}}  # fmt: skip
    assert "torch" in imported_on_import("faithprobe.subjects.hf.causal", modules())
    assert cycles(folder_graph(two_folders)) == [
        ["faithprobe.generators", "faithprobe.interventions"]
    ]


def test_a_module_named_in_a_text_is_an_import_by_name():
    """However the name is handed on (an alias of import_module, a variable, pieces joined,
    a pkgutil prefix, a lazy target), the arrow is seen; a docstring naming a module is not
    an import, nor a text that names no module."""
    source = '''"""Finds faithprobe.audit by name."""
from importlib import import_module as load
GROUP = "faithprobe.suites"
def find(path, name):
    """faithprobe.cli"""
    load(GROUP)
    load("faithprobe" + ".report." + "html")
    pkgutil.iter_modules(path, "faithprobe.metrics.")
    registry.add(name, "faithprobe.runner:run")
    return "faithprobe.json", "pip install faithprobe[ray]", f"faithprobe.training.{name}"
'''
    mods = modules()
    found = named_in(ast.parse(source), {**mods, "faithprobe.report.html": Path()})
    assert found == {"faithprobe.suites", "faithprobe.report.html", "faithprobe.metrics",
                     "faithprobe.runner", "faithprobe.training"}  # fmt: skip
    assert upward({"faithprobe.suite_protocol": {"faithprobe.suites"}}) == [
        "faithprobe.suite_protocol (runner) -> faithprobe.suites (suites)"
    ]
