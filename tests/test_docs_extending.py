"""``docs/extending.md`` stays true: what it names exists, and its sample addition applies.

The page tells a contributor every file an addition touches and which test holds it. Those
names rot silently when modules move (``conformance/``'s loose modules moved into packages), so
every path, test, constant and class the page names in backticks is looked up here, and the
sample diff is checked against the tree with ``git apply --check`` (not applied), so a change to
the files it patches asks for the sample to be redone by following the page again.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from conformance.rules import CATALOG
from mockserver.faults import fault_names

REPO = Path(__file__).parents[1]
PAGE = REPO / "docs" / "extending.md"
TOP = ("conformance", "mockserver", "reference_engine", "spec", "tests", "lab", "docs",
       "benchmarks")
"""The folders whose files the page may name; a path starting elsewhere is not a path."""

CODE = re.compile(r"`([^`\n]+)`")
SAMPLE = re.compile(r"^```diff\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def named() -> set[str]:
    """Everything the page writes in backticks, outside the sample diff."""
    return set(CODE.findall(SAMPLE.sub("", page())))


def sample() -> str:
    found = SAMPLE.findall(page())
    assert len(found) == 1, "docs/extending.md should hold one ```diff block, the sample"
    return str(found[0])


@cache
def sources() -> dict[Path, str]:
    """The text of every Python module and YAML file of the folders the page may name."""
    return {path: path.read_text(encoding="utf-8")
            for top in TOP for pattern in ("*.py", "*.yaml")
            for path in (REPO / top).rglob(pattern) if "__pycache__" not in path.parts}


def test_every_path_the_page_names_exists() -> None:
    """A repository path, with ``<area>`` or ``*`` standing for any name, matches a file; a
    bare file name (``truncation.py``) names a file somewhere in the folders above, at the
    root or in ``docs/``."""
    missing = []
    for text in named():
        if text.startswith(tuple(f"{top}/" for top in TOP)):
            pattern = re.sub(r"<[^>]+>", "*", text.split(" ", 1)[0]).rstrip("/")
            if not list(REPO.glob(pattern)):
                missing.append(text)
        elif re.fullmatch(r"[\w/]+\.(py|yaml|md)", text):
            if not any(path.as_posix().endswith("/" + text) for path in sources()) and not any(
                    (folder / text).exists() for folder in (REPO, REPO / "docs")):
                missing.append(text)
    assert not missing, f"docs/extending.md names files that do not exist: {sorted(missing)}"


def test_every_test_the_page_names_exists() -> None:
    tests = {name.split("[", 1)[0].rsplit("::", 1)[-1] for name in named()
             if re.search(r"(^|::)test_\w+(\[.*\])?$", name) and not name.endswith(".py")}
    defined = set(re.findall(r"^def (test_\w+)", "\n".join(
        text for path, text in sources().items() if path.suffix == ".py"), re.MULTILINE))
    assert tests, "the page names the tests that hold each addition"
    assert tests <= defined, f"tests the page names but no module defines: {tests - defined}"


def test_every_constant_and_class_the_page_names_exists() -> None:
    """``UNREACHABLE`` is assigned at the start of a line of some module, ``SamplingParams`` is
    a class or a schema of ``spec/completions.yaml``, ``_truncate`` a function or property."""
    text = "\n".join(sources().values())
    missing = [
        name for name in named()
        if (re.fullmatch(r"[A-Z][A-Z0-9_]+", name)
            and not re.search(rf"^{name}\b[^=\n]*=", text, re.MULTILINE))
        or (re.fullmatch(r"[A-Z][a-z]\w*", name)
            and not re.search(rf"^(class {name}\b|    {name}:)", text, re.MULTILINE))
        or (re.fullmatch(r"_[a-z]\w*", name)
            and not re.search(rf"^\s*def {name}\(", text, re.MULTILINE))
    ]
    assert not missing, f"names the page uses that no module defines: {sorted(missing)}"


def test_the_sample_adds_a_rule_and_a_fault_not_in_the_catalog() -> None:
    """The sample is an example: its rule ID and fault name are free, or applying it would
    fail at import on a name taken twice."""
    rule_id = re.search(r'^\+    "([A-Z-]+-\d{3})", ', sample(), re.MULTILINE)
    fault = re.search(r'^\+    name = "([a-z0-9-]+)"', sample(), re.MULTILINE)
    assert rule_id and fault
    taken = ({rule_id.group(1)} & {rule.id for rule in CATALOG}) | (
        {fault.group(1)} & set(fault_names()))
    assert not taken, (
        f"{sorted(taken)} of docs/extending.md's sample are in the tree: revert the sample after "
        "following the page, or, if it has landed for real, give the page a new example")


@pytest.mark.skipif(not (REPO / ".git").exists() or shutil.which("git") is None,
                    reason="needs a git checkout of the repository")
def test_the_sample_addition_applies_to_the_tree() -> None:
    """What the page says to run: its diff, piped to ``git apply`` at the repository's root
    (here only ``--check``: nothing is written). A tree that holds the sample already (one
    following the page) is left to the test above."""
    def check(*reverse: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "apply", "--check", *reverse, "-"], input=sample(),
                              cwd=REPO, capture_output=True, text=True, timeout=60, check=False)

    done = check()
    if done.returncode != 0 and check("--reverse").returncode == 0:
        pytest.skip("the sample is applied in this tree")
    assert done.returncode == 0, (
        "the sample diff of docs/extending.md no longer applies: apply its additions by hand, "
        f"run the checks it lists, and paste `git diff -U2` back into it\n{done.stderr}")
