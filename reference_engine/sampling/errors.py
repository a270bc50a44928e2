"""The one error the sampling package raises at generation time (besides argument errors).

Everything else this package raises is a plain ``ValueError`` (or ``TypeError``) naming the
argument and value at fault. This one is separate because it is not a caller mistake but a
state the generation loop must handle: the processors and constraints left no token to pick.
"""

from __future__ import annotations


class NoAllowedTokenError(ValueError):
    """Every token is banned: by -inf logits, by truncation and by the token filter combined.

    Raised by ``process_logits`` when every processed logit is -inf, and by ``sample`` when no
    candidate passes the token filter (e.g. ``bad_word_tokens`` banned the only bytes the
    ``json_object`` grammar could accept next). The generation loop should end the choice.
    """
