"""The sampling package's errors: invalid request parameters, and no token left to pick.

``InvalidParameter`` (``WrongParameterType`` for a wrong type) is a request parameter outside
its domain, raised while ``SamplingParams`` validates (``response_format`` included, whose
grammar is compiled then); ``param`` names the field. Everything else this package raises
for a caller mistake is a plain ``ValueError`` (or ``TypeError``) naming the argument and
value at fault. ``NoAllowedTokenError`` is separate because it is not a caller mistake but a
state the generation loop must handle: the processors and constraints left no token to pick.
"""

from __future__ import annotations


class NoAllowedTokenError(ValueError):
    """Every token is banned: by -inf logits, by truncation and by the token filter combined.

    Raised by ``process_logits`` when every processed logit is -inf, and by ``sample`` when no
    candidate passes the token filter (e.g. ``bad_word_tokens`` banned the only bytes the
    ``json_object`` grammar could accept next). The generation loop should end the choice.
    """


class InvalidParameter(ValueError):
    """A sampling parameter outside its domain; ``param`` names it (``logit_bias`` for
    ``logit_bias[50256]``), so a server can report the field without reading the message."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


class WrongParameterType(InvalidParameter, TypeError):
    """A sampling parameter of the wrong type (also a ``TypeError``)."""
