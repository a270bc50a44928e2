"""``python -m reference_engine.tokenizer export DIR``: the tokenizer as a Hugging Face directory.

Writes ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json`` (see
``reference_engine.tokenizer.huggingface``) built from the shipped artifact, or from the
artifacts in ``--artifacts DIR`` (a ``python -m reference_engine.training --out DIR`` build).
The files are the same bytes on every run. Point lm-eval's ``tokenizer=`` (with
``tokenizer_backend=huggingface``) or ``AutoTokenizer.from_pretrained`` at ``DIR``.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from pathlib import Path

from reference_engine.artifacts import load, load_from
from reference_engine.engine import CONTEXT_LENGTH

from .huggingface import export


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, export, and print one line per file written."""
    parser = argparse.ArgumentParser(
        prog="python -m reference_engine.tokenizer", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    export_command = commands.add_parser(
        "export", help="write the tokenizer as a Hugging Face tokenizer directory")
    export_command.add_argument("directory", type=Path, help="where to write (created if missing)")
    export_command.add_argument("--artifacts", type=Path, default=None,
                                help="artifacts directory (default: the shipped artifacts)")
    args = parser.parse_args(argv)
    artifacts = load() if args.artifacts is None else load_from(args.artifacts)
    for path in export(artifacts.tokenizer, args.directory, context_length=CONTEXT_LENGTH):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(f"{path}: {path.stat().st_size} bytes sha256 {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
