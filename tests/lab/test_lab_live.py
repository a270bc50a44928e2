"""The lab live (opt-in: ``pytest -m lab -n 0``): each server runs, and a replay of that very
run gets the verdicts the live run got. Installs what is missing first (llama-cpp-python
compiles for ~10 minutes), so it is never part of the default suite or ``.ci/run``."""

from __future__ import annotations

import pytest

from lab.record import check
from lab.servers import SERVERS, ready_servers

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_a_replay_of_a_live_run_gets_its_verdicts(name: str) -> None:
    assert check(ready_servers([name]))
