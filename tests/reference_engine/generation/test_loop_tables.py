"""The lookup tables and caches on the generation loop's per-token path give what the slow
computations they replace give: the UTF-8 state after each token, stop-string release
without stop strings, and the model's view cache under concurrent threads."""

from __future__ import annotations

import threading

import pytest

from reference_engine import Engine
from reference_engine.generation.text_stops import TextStopMatcher
from reference_engine.generation.utf8_filter import continues_validly, utf8_filters
from reference_engine.model.cache import LRUCache

VOCAB = (b"a", b"\xc3", b"\xa9", b"\xe2\x82", b"\xac", b"\xf0\x9f", b"\x98\x80", b"\xff",
         b"\xa9\xa9", b"<|endoftext|>")
SPECIAL = frozenset({9})


@pytest.mark.parametrize("waiting", range(4))
def test_after_is_the_state_continues_validly_leaves(waiting: int) -> None:
    table = utf8_filters(VOCAB, SPECIAL)[waiting]
    for token, data in enumerate(VOCAB):
        assert table.after[token] == continues_validly(data, waiting)[1], (token, waiting)
        expected = (waiting == 0) if token in SPECIAL else continues_validly(data, waiting)[0]
        assert table(token) is expected


def test_after_covers_the_shipped_vocabulary() -> None:
    engine = Engine()
    engine.load()
    token_bytes = [engine.tokenizer.token_bytes(i) for i in range(engine.vocab_size)]
    filters = utf8_filters(token_bytes, frozenset(engine.tokenizer.special_tokens.values()))
    for waiting, table in enumerate(filters):
        assert list(table.after) == [continues_validly(data, waiting)[1]
                                     for data in token_bytes]


def test_text_without_stop_strings_is_released_as_it_comes() -> None:
    matcher = TextStopMatcher(())
    pieces = ["Hello", "", ", ", "wor", "ld"]
    released = [matcher.push(piece) for piece in pieces]
    assert [scan.release for scan in released] == pieces
    assert not any(scan.stopped for scan in released)
    assert matcher.text == "Hello, world" and matcher.released == len(matcher.text)
    assert matcher.finish() == ""


def test_lru_cache_evicts_the_least_recently_used() -> None:
    cache: LRUCache[int, str] = LRUCache(2)
    cache.put(1, "one")
    cache.put(2, "two")
    assert cache.get(1) == "one"  # 2 is now the least recently used
    cache.put(3, "three")
    assert cache.get(2) is None and cache.get(1) == "one" and cache.get(3) == "three"
    assert cache.put(3, "other") == "three"  # the first value stored is kept
    assert len(cache) == 2
    assert LRUCache(0).put(1, "x") == "x" and len(LRUCache(0)) == 0


def test_lru_cache_stays_bounded_and_consistent_under_threads() -> None:
    cache: LRUCache[int, int] = LRUCache(64)
    errors: list[BaseException] = []

    def hammer(offset: int) -> None:
        try:
            for i in range(20_000):
                key = (i * 7 + offset) % 200
                found = cache.get(key)
                assert found is None or found == key * 3
                assert cache.put(key, key * 3) == key * 3
        except BaseException as error:  # reported below, in the main thread
            errors.append(error)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(cache) <= 64
