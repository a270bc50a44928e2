"""text_offsets are judged where the tokens can be placed in the text (issue 33): vLLM lists
an end-of-text ``</s>`` and, under echo, a leading ``<s>`` that its text leaves out, so its
tokens do not spell the text (LOGPROBS-004), yet the offsets of the others are still judged."""

from __future__ import annotations

from conformance.rules.logprobs import located_offsets


def test_tokens_the_text_leaves_out_take_no_room() -> None:
    tokens = ["<s>", "A", " list", " is", " The", "</s>"]
    assert located_offsets(tokens, "A list is The") == [None, 0, 1, 6, 9, None]


def test_tokens_that_spell_the_text_are_placed_as_they_count() -> None:
    assert located_offsets(["A", " list", "bytes:\\xe6\\x97", "bytes:\\xa5"],
                           "A list\u65e5") == [0, 1, 6, None]


def test_nothing_is_placed_unless_the_tokens_found_spell_the_whole_text() -> None:
    assert located_offsets(["X", "a"], "aa") == [None, None]  # "a" may be the second one
    assert located_offsets([" A", " list"], "A list") == [None, None]  # SPM's dummy prefix
