"""The context checks run in, and the layered accessors that keep rules orthogonal."""

from .context import BROKEN_FRAMING, CheckContext, unsound

__all__ = ["BROKEN_FRAMING", "CheckContext", "unsound"]
