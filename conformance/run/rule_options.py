"""The flags that choose which rules a command judges: ``--select``, ``--deselect`` and
``--strict``, written once for ``run``, ``fuzz`` and ``judge``, which each place them in their
own ``--help`` section and say in their own verb what a chosen rule is for."""

from __future__ import annotations

import argparse

import spec
from conformance.model import Rule
from conformance.rules import CATALOG
from conformance.target.checks import split_list

STRICT_HELP = "count NON_STRICT (a broken SHOULD) as a failure"


def add_rule_selection(group: argparse._ArgumentGroup, *, verb: str) -> None:
    """``--select`` and ``--deselect`` (repeatable, comma-separated IDs or globs); ``verb`` is
    what the command does with a selected rule (``run``, ``judge``)."""
    group.add_argument("--select", action="append", default=[], metavar="IDS",
                       help=f"{verb} only these rule IDs or globs (SSE-*), comma-separated")
    group.add_argument("--deselect", action="append", default=[], metavar="IDS",
                       help="leave out these rule IDs or globs, comma-separated")


def add_strict(group: argparse._ArgumentGroup, *, help: str = STRICT_HELP) -> None:
    """``--strict``: what a broken SHOULD rule then counts as, in the command's words."""
    group.add_argument("--strict", action="store_true", help=help)


def selected_rules(args: argparse.Namespace, profile: spec.Profile) -> list[Rule]:
    """The catalog's rules of ``profile`` that ``--select`` and ``--deselect`` leave."""
    return CATALOG.select(profile=profile, select=split_list(args.select),
                          deselect=split_list(args.deselect))
