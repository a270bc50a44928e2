"""Generating an answer on the engine's threads, stoppable between prompts.

``Engine.complete_prompts`` hands the completion over prompt by prompt; drawn here with the
job's stop flag checked in between, a request of 100,000 prompts stops when its client leaves
or its budget runs out (issue 13, part 3) instead of outliving both.
"""

from __future__ import annotations

import threading

from reference_engine import Engine
from reference_engine.request import GenerationRequest
from reference_engine.results import Completion

from .offload import checked


def complete(engine: Engine, generation: GenerationRequest, stop: threading.Event) -> Completion:
    """``engine.complete(generation)``, raising ``Stopped`` between prompts when told."""
    return Completion.joined(checked(engine.complete_prompts(generation), stop))
