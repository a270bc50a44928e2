"""Valid rendering variants of the mock's answers (issue 37, part 4).

Chosen like faults: for every request (``mockserver --variant NAME[,NAME]``) or per request
(the ``X-Mock-Variant: NAME[,NAME]`` header). Each is a rendering a real server uses and the
contract allows, so no conformance rule may fail it. ``base`` says what a variant is;
``registry`` keeps them; ``chunks``, ``framing`` and ``fields`` hold them; ``active`` applies a
request's variants.
"""

from . import chunks, fields, framing  # noqa: F401  (each registers its variants)
from .active import ActiveVariants
from .base import StreamContext, Variant
from .registry import UnknownVariantError, all_variants, parse_variant_names

__all__ = [
    "ActiveVariants",
    "StreamContext",
    "UnknownVariantError",
    "Variant",
    "all_variants",
    "parse_variant_names",
]
