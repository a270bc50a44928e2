"""Constrained decoding with llguidance (``grammar``, ``response_format``): the json_object
grammar equals the plainly written recognizer token by token, the reported part of the mask,
the lazy filter, json_schema and regex, and generation that always ends in valid output."""

from __future__ import annotations

import json
import random
import re

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_object_oracle import INITIAL_STATE, JsonGrammar, is_complete

from reference_engine.sampling import (
    Grammar,
    GrammarVocabulary,
    InvalidParameter,
    SamplingContext,
    SamplingParams,
    SeededRng,
    apply_grammar,
    process_logits,
    sample,
)
from reference_engine.sampling.response_format import grammar, json_object_lark

EOS = b"<|endoftext|>"
MIXED_VOCAB = [
    b"{", b"}", b"[", b"]", b'"', b":", b",", b" ", b"  ", b"\n", b"\t", b"a", b"ab", b'"a"',
    b'"a":', b'":', b'",', b'"}', b"1", b"12", b"-", b".", b"e", b"true", b"tr", b"ue", b"t",
    b"r", b"null", b"\\", b"\\n", b"\\u", b"00e9", b"\xc3", b"\xa9", b"\xc3\xa9",
    b"\xe6\x97\xa5", b"x", b"", b'{"', b"}}", b" {", b'a"}', b"b", b"c", b"-1", b"0", EOS,
]  # fmt: skip
EOS_ID = len(MIXED_VOCAB) - 1
MIXED_EOS = frozenset({EOS_ID})
SMALL_VOCAB = [b"{", b"}", b'"a"', b":", b"1", b",", b" ", b"x", EOS]
SMALL_EOS = frozenset({len(SMALL_VOCAB) - 1})


def vocabulary(vocab: list[bytes] = MIXED_VOCAB) -> GrammarVocabulary:
    return GrammarVocabulary(vocab, {len(vocab) - 1})


def json_object_grammar(max_whitespace: int = 32, max_depth: int = 32) -> Grammar:
    import llguidance

    lark = json_object_lark(max_whitespace=max_whitespace, max_depth=max_depth)
    return Grammar(vocabulary(), llguidance.LLMatcher.grammar_from_lark(lark))


def oracle_allows(oracle: JsonGrammar, state: tuple, data: bytes) -> bool:
    return bool(data) and oracle.advance(state, data) is not None


def walks(oracle: JsonGrammar, count: int, length: int, seed: int = 0) -> list[list[int]]:
    """Random token paths the oracle accepts (EOS aside)."""
    rnd = random.Random(seed)
    paths = []
    for _ in range(count):
        state, path = INITIAL_STATE, []
        for _ in range(length):
            options = [i for i, t in enumerate(MIXED_VOCAB[:-1]) if oracle_allows(oracle, state, t)]
            if not options:
                break
            token = rnd.choice(options)
            path.append(token)
            state = oracle.advance(state, MIXED_VOCAB[token])
            paths.append(list(path))
    return paths


@pytest.mark.parametrize(("max_whitespace", "max_depth"), [(32, 32), (2, 2), (1, 3)])
def test_json_object_grammar_is_the_oracle_token_by_token(
    max_whitespace: int, max_depth: int
) -> None:
    """Mask, per-token answer and completeness equal the recognizer's in every state reached,
    forced states (inside ``true``, after a whitespace run at its bound) included."""
    oracle = JsonGrammar(max_whitespace=max_whitespace, max_depth=max_depth)
    compiled = json_object_grammar(max_whitespace, max_depth)
    paths = walks(oracle, 40, 14)
    assert len(paths) > 300
    for path in paths:
        state = compiled.start(MIXED_EOS, path)
        expected_state = oracle.advance(INITIAL_STATE, b"".join(MIXED_VOCAB[t] for t in path))
        assert expected_state is not None
        expected = [oracle_allows(oracle, expected_state, t) for t in MIXED_VOCAB[:-1]]
        expected.append(is_complete(expected_state))  # EOS: only once the object is closed
        assert state.allowed_mask().tolist() == expected, path
        assert [state.allows(i) for i in range(len(MIXED_VOCAB))] == expected, path
        assert state.accepting == is_complete(expected_state)


def test_forced_bytes_keep_every_token_the_grammar_accepts() -> None:
    """llguidance alone would offer only the canonical token of forced bytes (``tr``)."""
    state = json_object_grammar().start(
        MIXED_EOS, [MIXED_VOCAB.index(b"{"), MIXED_VOCAB.index(b'"a":'), MIXED_VOCAB.index(b"t")]
    )
    allowed = {MIXED_VOCAB[i] for i in np.flatnonzero(state.allowed_mask())}
    assert allowed == {b"r"}
    state = json_object_grammar().start(
        MIXED_EOS, [MIXED_VOCAB.index(b"{"), MIXED_VOCAB.index(b'"a":')]
    )
    assert {b"t", b"tr", b"true"} <= {MIXED_VOCAB[i] for i in np.flatnonzero(state.allowed_mask())}


def test_advance_is_persistent_and_rejects_what_the_grammar_does() -> None:
    compiled = json_object_grammar()
    start = compiled.start(MIXED_EOS)
    opened = start.advance(MIXED_VOCAB.index(b"{"))
    assert not start.allows(MIXED_VOCAB.index(b"}")) and opened.allows(MIXED_VOCAB.index(b"}"))
    branch = start.advance(MIXED_VOCAB.index(b" "))  # an older state moves on: a branch
    assert branch.allows(MIXED_VOCAB.index(b"{")) and opened.allows(MIXED_VOCAB.index(b'"a":'))
    assert opened.advance(EOS_ID) is opened  # end-of-text leaves the grammar where it is
    with pytest.raises(ValueError, match="not allowed by the response_format grammar"):
        opened.advance(MIXED_VOCAB.index(b"x"))
    assert opened.allows(MIXED_VOCAB.index(b"}"))  # still usable after a rejected token


def test_reported_part_bans_eos_until_accepting_then_applies_the_whole_mask() -> None:
    """The contract in ``grammar``'s docstring: before the mask except where the output may
    end; there, after it."""
    compiled = json_object_grammar()
    eos = np.array([EOS_ID])
    opened = compiled.start(MIXED_EOS, [MIXED_VOCAB.index(b"{")])
    logits = np.zeros(len(MIXED_VOCAB))
    apply_grammar(logits, opened, eos)
    assert {MIXED_VOCAB[i] for i in np.flatnonzero(logits == -np.inf)} == {EOS, b""}
    done = opened.advance(MIXED_VOCAB.index(b"}"))
    logits = np.zeros(len(MIXED_VOCAB))
    apply_grammar(logits, done, eos)
    assert {MIXED_VOCAB[i] for i in np.flatnonzero(logits > -np.inf)} == {
        b" ", b"  ", b"\n", b"\t", EOS
    }
    assert set(logits[logits > -np.inf]) == {0.0}  # allowed values untouched


def test_whitespace_after_the_object_is_bounded() -> None:
    compiled = json_object_grammar(max_whitespace=2)
    state = compiled.start(MIXED_EOS, [MIXED_VOCAB.index(b"{"), MIXED_VOCAB.index(b"}")])
    state = state.advance(MIXED_VOCAB.index(b" "))
    allowed = {MIXED_VOCAB[i] for i in np.flatnonzero(state.allowed_mask())}
    assert allowed == {b" ", b"\n", b"\t", EOS}
    state = state.advance(MIXED_VOCAB.index(b" "))
    assert {MIXED_VOCAB[i] for i in np.flatnonzero(state.allowed_mask())} == {EOS}


def test_vocabulary_mismatch_is_an_error() -> None:
    params = SamplingParams(response_format="json_object")
    with pytest.raises(ValueError, match="vocabulary"):
        SamplingContext(params, prompt_ids=[0], token_bytes=SMALL_VOCAB, eos_ids=SMALL_EOS,
                        grammar=json_object_grammar())


# -- json_schema and regex -------------------------------------------------------------------


def test_schema_and_pattern_are_required_checked_and_named() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    params = SamplingParams(response_format="json_schema", response_schema=schema)
    assert params.response_schema == json.dumps(schema, separators=(",", ":"))
    assert params.constrained and params.json_object and params.has_logit_processors
    assert SamplingParams(response_format="regex", response_schema="a+").constrained
    bad: list[dict] = [
        {"response_format": "json_schema"},
        {"response_format": "regex"},
        {"response_format": "json_object", "response_schema": "a"},
        {"response_format": "json_schema", "response_schema": {"type": "strin"}},
        {"response_format": "json_schema", "response_schema": [1]},
        {"response_format": "json_schema", "response_schema": "{not json"},
        {"response_format": "json_schema",
         "response_schema": {"type": "string", "minLength": 3, "maxLength": 1}},
        {"response_format": "json_schema", "response_schema": {"$ref": "#/nowhere"}},
        {"response_format": "regex", "response_schema": "(?=a)b"},
        {"response_format": "regex", "response_schema": "(?<!a)b"},
        {"response_format": "regex", "response_schema": "(a)\\1"},
        {"response_format": "regex", "response_schema": "a{3"},
        {"response_format": "regex", "response_schema": 5},
    ]
    for kwargs in bad:
        with pytest.raises(InvalidParameter) as info:
            SamplingParams(**kwargs)
        assert info.value.param == "response_format", kwargs


def test_lookaround_and_backreference_messages_say_why() -> None:
    with pytest.raises(InvalidParameter, match="look-around"):
        grammar("regex", "(?=a)b")
    with pytest.raises(InvalidParameter, match="backreferences"):
        grammar("regex", "(a)\\1")


def generate(
    vocab: list[bytes], eos_ids: frozenset[int], params: SamplingParams, seed: int,
    steps: int = 200,
) -> tuple[bytes, bool]:
    """Run the real loop: process_logits -> sample(allowed=...) -> advance. Returns
    (bytes generated before EOS, whether EOS ended it)."""
    rnd = np.random.default_rng(seed)
    ctx = SamplingContext(params, prompt_ids=[0], token_bytes=vocab, eos_ids=eos_ids)
    rng = SeededRng(seed)
    out: list[bytes] = []
    for _ in range(steps):
        raw = rnd.normal(0.0, 3.0, len(vocab))
        logprobs = raw - np.log(np.sum(np.exp(raw)))
        token = sample(process_logits(logprobs, ctx), params, rng, allowed=ctx.token_filter())
        if token in eos_ids:
            return b"".join(out), True
        out.append(vocab[token])
        ctx = ctx.advance(token)
    return b"".join(out), False


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.7, 1.0, 1.5]))
def test_generation_ending_in_eos_is_always_one_json_object(seed: int, temperature: float) -> None:
    params = SamplingParams(temperature=temperature, response_format="json_object")
    text, ended = generate(SMALL_VOCAB, SMALL_EOS, params, seed)
    if ended:
        assert isinstance(json.loads(text), dict)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_generation_over_a_mixed_vocabulary_stays_valid(seed: int) -> None:
    params = SamplingParams(top_k=5, response_format="json_object")
    text, ended = generate(MIXED_VOCAB, MIXED_EOS, params, seed)
    if ended:
        assert isinstance(json.loads(text.decode("utf-8")), dict)


def test_generation_usually_finishes() -> None:
    params = SamplingParams(temperature=0.0, response_format="json_object")
    finished = sum(generate(SMALL_VOCAB, SMALL_EOS, params, seed)[1] for seed in range(40))
    assert finished >= 20  # the test above is not vacuous


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_json_schema_generation_validates(seed: int) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": [True]}},
              "required": ["a"]}
    params = SamplingParams(temperature=1.0, response_format="json_schema",
                            response_schema=schema)
    text, ended = generate(MIXED_VOCAB, MIXED_EOS, params, seed, steps=60)
    if ended:
        jsonschema.validate(json.loads(text.decode("utf-8")), schema)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_regex_generation_fully_matches(seed: int) -> None:
    pattern = "[a-c]{2,4}-[0-9]+"
    params = SamplingParams(response_format="regex", response_schema=pattern)
    text, ended = generate(MIXED_VOCAB, MIXED_EOS, params, seed, steps=30)
    assert re.fullmatch("[a-c]{0,4}(-[0-9]*)?", text.decode("utf-8"))  # always a prefix
    if ended:
        assert re.fullmatch(pattern, text.decode("utf-8"))


def test_the_json_object_grammar_only_accepts_utf8_so_it_can_filter_alone() -> None:
    """The generation loop drops the UTF-8 filter for such grammars: it must never be needed."""
    from reference_engine.generation.utf8_filter import continues_validly, utf8_filters

    compiled = json_object_grammar()
    filters = utf8_filters(MIXED_VOCAB, MIXED_EOS)
    for path in walks(JsonGrammar(), 20, 12, seed=3):
        waiting = 0
        for token in path:
            waiting = continues_validly(MIXED_VOCAB[token], waiting)[1]
        mask = compiled.start(MIXED_EOS, path).allowed_mask()
        utf8 = filters[waiting].mask(np.arange(len(MIXED_VOCAB)))
        assert not (mask & ~utf8).any(), path
    with pytest.raises(InvalidParameter, match="invalid UTF-8"):  # so every grammar is UTF-8
        grammar("regex", "(?-u:\\xff)+")


def test_sparse_log_softmax_gives_the_general_paths_bits() -> None:
    from reference_engine.sampling import log_softmax
    from reference_engine.sampling.logprobs import sparse_log_softmax

    rnd = np.random.default_rng(5)
    for _ in range(50):
        base = log_softmax(rnd.normal(0.0, 3.0, 300))
        base[rnd.integers(0, 300, 3)] = -np.inf
        banned = np.unique(rnd.integers(0, 300, rnd.integers(1, 20)))
        x = base.copy()
        x[banned] = -np.inf
        np.testing.assert_array_equal(sparse_log_softmax(base, banned), log_softmax(x, base=base))


def test_grammar_only_is_set_when_no_other_processor_is() -> None:
    assert SamplingParams(response_format="json_object", min_tokens=2, top_p=0.5).grammar_only
    assert not SamplingParams(response_format="json_object", presence_penalty=0.1).grammar_only
    assert not SamplingParams(logit_bias={1: 1.0}).grammar_only
