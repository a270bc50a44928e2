"""The two ways a run ends before any verdict, both exit status 2.

:class:`UsageError` is the user's to fix (a flag, a URL, a file); :class:`HarnessError` says the
run could not happen (the target unreachable or refusing every request, the mock not starting).
Each carries one line naming the cause and the fix, which the front ends print as they are
(``conformance: error: ...``, or pytest's ``ERROR: ...``).
"""

from __future__ import annotations


class UsageError(Exception):
    """A flag or environment value the run cannot use (exit status 2)."""


class HarnessError(Exception):
    """The run could not start: the mock did not come up, the target was unreachable or
    refused the run (exit status 2)."""
