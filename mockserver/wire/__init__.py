"""The wire layer: JSON bodies in, :class:`GenerationRequest` out; engine results in, JSON out.

Pure (no aiohttp, no I/O), so the server, the tests and ``python -m mockserver.render`` share
it. ``build_request`` reads a validated request body of either route; ``completion_body`` and
``stream_chunks`` render the engine's results exactly in the shapes of
``spec/completions.yaml`` (``stream_frames``: the same stream as bytes, for streams no fault
bends); ``Identity`` is drawn once per request.
"""

from .chunks import stream_chunks, stream_frames
from .formats import WIRES, Wire, wire_of
from .identity import Identity
from .logprobs import logprobs_object, usage_object
from .options import WireOptions
from .requests import build_request, integral_numbers
from .responses import completion_body, identity_prefix

__all__ = [
    "WIRES",
    "Identity",
    "Wire",
    "WireOptions",
    "build_request",
    "completion_body",
    "identity_prefix",
    "integral_numbers",
    "logprobs_object",
    "stream_chunks",
    "stream_frames",
    "usage_object",
    "wire_of",
]
