"""FRIENDLI-007..009 judge an output cut by the token limit as a prefix: what it holds must be
able to become a valid output, so a cut answer is judged, never skipped, and a valid one is
never flagged (the fault meta-test covers the server that ignores response_format)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from conformance.probes.structured import PATTERN, PATTERN_PREFIX
from conformance.rules.structured_outputs import _starts_an_object


def test_a_cut_object_may_be_whitespace_or_an_opened_object_only() -> None:
    for text in ("", "\n\n\n", ' {"ok"', '{"ok": tr', "\t{"):
        assert _starts_an_object(text), text
    for text in ("A list is", "[1, 2", "\n\nx{", '"ok"'):
        assert not _starts_an_object(text), text


@given(st.from_regex(PATTERN, fullmatch=True), st.data())
def test_every_prefix_of_a_match_is_a_valid_cut_regex_output(match: str, data: st.DataObject
                                                               ) -> None:
    cut = data.draw(st.integers(0, len(match)))
    assert re.fullmatch(PATTERN_PREFIX, match[:cut])


def test_text_that_no_match_starts_with_is_not_a_valid_cut_output() -> None:
    for text in ("abcda", "a-b", "a-", "ab-1234", " ab", "d"):
        assert not re.fullmatch(PATTERN_PREFIX, text), text
