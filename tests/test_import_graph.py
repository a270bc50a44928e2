"""No import cycles in the product: every import statement of the four packages (function-level
and ``TYPE_CHECKING`` ones included, since a deferred import that closes a cycle only hides
it) makes an edge, and the graph over modules has no cycle.

An edge goes from the importing module to the module it names (``from a.b import c`` names
``a.b.c`` when that is a module, else ``a.b``); a package's ``__init__`` is the package's own
node. A package that imports its own modules to have them register (rules, probes, faults) does
not close a cycle by that: its modules import their siblings, not the package.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("spec", "reference_engine", "mockserver", "conformance", "procutil")


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _known(name: str) -> str | None:
    """The longest module of the product that ``name`` is or lies in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                names.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {found for name in names if (found := _known(name)) and found != module}


@functools.cache
def graph() -> dict[str, set[str]]:
    """Every module's imports of the product, parsed on first use: not at collection, where each
    xdist worker would parse the ~300 modules whether it runs these tests or not."""
    return {module: _imported(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_product_has_no_import_cycle() -> None:
    assert _cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The test above can fail: a graph with a cycle is reported, one without is not."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", ["conformance.model.rule", "conformance.model.registry"])
def test_the_model_imports_nothing_above_it(module: str) -> None:
    """The rule model is records: it names no module of the harness outside the model."""
    above = {name for name in graph()[module]
             if name.startswith("conformance.") and not name.startswith("conformance.model")}
    assert above == set()


ABOVE = {
    "conformance.rules": ("conformance.fuzz", "conformance.judge"),
    "conformance.bindings": ("conformance.rules", "conformance.fuzz", "conformance.judge"),
}
"""Packages of the harness that a package of it never imports, by any of its modules: the rule
catalog lies below the fuzzer and the judge that read it, and a rule's ``fuzz`` names a binding
of :mod:`conformance.bindings`, below all three (so no package needs lazy imports to dodge a
cycle)."""


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def _reaching_above(graph: dict[str, set[str]], package: str,
                    above: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every import of a module of ``package`` that names a module of a package in ``above``."""
    return sorted((module, target) for module, targets in graph.items()
                  if _within(module, package)
                  for target in targets if any(_within(target, each) for each in above))


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_a_harness_package_never_imports_the_packages_above_it(package: str) -> None:
    assert _reaching_above(graph(), package, ABOVE[package]) == []


def test_the_layer_check_finds_an_import_from_above() -> None:
    """The test above can fail: a rule module importing the fuzzer (its package or a module of
    it) is reported; a sibling whose name only begins alike is not the fuzzer."""
    imports = {"conformance.rules.base": {"conformance.fuzz.bindings", "conformance.model"},
               "conformance.rules.echo": {"conformance.fuzz"},
               "conformance.rules.stop": {"conformance.fuzzy"},
               "conformance.fuzz.checks": {"conformance.rules"}}
    assert _reaching_above(imports, "conformance.rules", ("conformance.fuzz",)) == [
        ("conformance.rules.base", "conformance.fuzz.bindings"),
        ("conformance.rules.echo", "conformance.fuzz")]


def test_imports_are_resolved() -> None:
    """The graph is not empty by a bug: known edges are in it."""
    assert "conformance.run.check_context" in graph()["conformance.rules.common"]
    assert "conformance.bindings.binders" in graph()["conformance.rules.base"]


LAYERS = {
    "spec": set(),
    "reference_engine": set(),
    "procutil": set(),
    "mockserver": {"spec", "reference_engine", "procutil"},
    "conformance": {"spec", "procutil"},
}
"""The packages each package may import: the harness tests any server over HTTP and never
imports the mock or the engine (it starts the mock as a child process); the mock serves the
contract on the engine; the contract and the engine stand alone, and so does the process
plumbing both commands share (``procutil``: quiet broken pipes, the C heap)."""


def test_each_package_imports_only_the_packages_below_it() -> None:
    crossing = sorted(
        (module, target)
        for module, targets in graph().items()
        for target in targets
        if target.split(".")[0] != module.split(".")[0]
        and target.split(".")[0] not in LAYERS[module.split(".")[0]]
    )
    assert crossing == []


LOOSE_MODULES_AT_MOST = 8
"""How many modules may sit in ``conformance/`` beside its packages (``__init__`` and
``__main__`` included). A module that belongs to one job goes in that job's package (``target``,
``run``, ``pytest_plugin``, ``contract``...); only what every part shares stays loose."""


def test_the_harness_front_hall_holds_few_loose_modules() -> None:
    loose = sorted(path.name for path in (ROOT / "conformance").glob("*.py"))
    assert len(loose) <= LOOSE_MODULES_AT_MOST, loose


def test_every_test_folder_mirrors_a_package_of_the_harness() -> None:
    """``tests/conformance/X/`` tests ``conformance/X`` (or ``conformance/X.py``): a reader finds
    a module's tests from its folder name alone; ``catalog`` holds the catalog's cross-cutting
    proofs (every rule can fail, every fault is caught), which belong to no one package."""
    harness = {path.stem for path in (ROOT / "conformance").iterdir()
               if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py"}
    folders = {path.name for path in (ROOT / "tests" / "conformance").iterdir()
               if path.is_dir() and path.name != "__pycache__"}
    assert folders - harness - {"catalog"} == set()
