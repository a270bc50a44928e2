"""During a fuzz run hypothesis draws no constant of the process's own modules (see
conformance/fuzz/constants.py): the pool is empty inside the block and back after it."""

from __future__ import annotations

from hypothesis.internal.conjecture import providers

from conformance.fuzz.constants import no_local_constants


def _pool_size() -> int:
    return len(providers._get_local_constants())


def test_the_pool_is_empty_inside_and_restored_after() -> None:
    original = providers._get_local_constants
    assert _pool_size() > 0  # this very suite's modules (and the editable harness) are local
    with no_local_constants():
        assert _pool_size() == 0
        assert not providers.CONSTANTS_CACHE.cache  # pools cached from the old constants go
        with no_local_constants():  # reentrant: an inner block restores nothing
            assert _pool_size() == 0
        assert _pool_size() == 0
    assert providers._get_local_constants is original
    assert _pool_size() > 0


def test_the_pool_is_restored_when_the_run_fails() -> None:
    original = providers._get_local_constants
    try:
        with no_local_constants():
            raise RuntimeError("the run broke")
    except RuntimeError:
        pass
    assert providers._get_local_constants is original
