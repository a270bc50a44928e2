"""Every fault changes the wire output in the way its name says (and the clean mock does not).

The harness later proves each fault breaks exactly its rule; here we prove each does what it
says, one scenario per fault, in the ``test_mock_faults_*.py`` module of its area (helpers in
``mock_fault_support``). This test keeps those tables complete as faults are added.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from mock_fault_support import SCENARIOS

from mockserver.faults import fault_names


def test_every_fault_has_a_scenario() -> None:
    for module in sorted(Path(__file__).parent.glob("test_mock_faults_*.py")):
        importlib.import_module(module.stem)  # registers that area's scenarios
    assert sorted(SCENARIOS) == fault_names()
