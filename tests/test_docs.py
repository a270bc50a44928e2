"""The front door stays a front door: a short README that links every page of ``docs/``.

The pages are also an MkDocs site (``mkdocs.yml``); ``.ci/run`` builds it with ``--strict``,
which fails on a broken link or anchor. These checks are the cheap part, run in the default
suite without MkDocs: the README's length, its links, and the site's navigation.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 250

LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages() -> set[str]:
    """Every Markdown page under ``docs/``, as a path relative to it."""
    return {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}


def local_links(text: str) -> set[str]:
    """The targets of a Markdown text's links that are not URLs, without their anchors."""
    targets = {match.group(1).split("#", 1)[0] for match in LINK.finditer(text)}
    return {target for target in targets if target and "://" not in target}


def nav_pages(entries: list[object]) -> list[str]:
    """The pages that ``mkdocs.yml``'s ``nav`` lists, sections flattened."""
    found: list[str] = []
    for entry in entries:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            if isinstance(value, list):
                found += nav_pages(value)
            else:
                found.append(str(value))
    return found


def test_the_readme_stays_short() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_README_LINES, (
        f"README.md has {lines} lines: move the detail into a page of docs/ and link it")


def test_the_readme_links_every_page_of_docs() -> None:
    linked = {target.removeprefix("docs/") for target in
              local_links(README.read_text(encoding="utf-8")) if target.startswith("docs/")}
    assert pages() - linked == set(), "pages of docs/ the README's Documentation list lacks"


def test_the_readmes_links_lead_to_files() -> None:
    missing = {target for target in local_links(README.read_text(encoding="utf-8"))
               if not (REPO / target).exists()}
    assert missing == set()


def test_the_site_navigation_lists_every_page_once() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    listed = nav_pages(config["nav"])
    assert sorted(listed) == sorted(set(listed)), "a page is listed twice in mkdocs.yml's nav"
    assert set(listed) == pages()


def test_the_front_pages_name_every_shipped_profile() -> None:
    """The README and the site's home list the profiles by hand, in the contract's paragraph
    (and the README's features): a profile added to ``spec/profiles/`` must be named there."""
    import spec

    for path in (README, DOCS / "index.md"):
        paragraph = next(block for block in path.read_text().split("\n- ")
                         if "machine-readable profiles" in block)
        missing = [name for name in spec.profile_names() if f"`{name}`" not in paragraph]
        assert not missing, f"{path.name}'s contract paragraph does not name {missing}"
    features = next(block for block in README.read_text().split("\n- ")
                    if block.startswith("**Profiles**"))
    assert all(f"`{name}`" in features for name in spec.profile_names())
