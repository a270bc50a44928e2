"""The harness's verdicts on real servers, from their recordings (``tests/fixtures/lab/``).

``lab/run record`` ran the catalog against each lab server (llama-cpp-python on a tiny GGUF
model, LiteLLM's proxy, Prism on our spec) and kept the reports. Here each report is replayed
by ``mockserver --replay`` (a child process, as the harness tests any server) and the catalog
runs against the replay over HTTP: every rule must get the verdict and reason of the table
``tests/fixtures/lab/verdicts.yaml``, and every FAIL there says which real deviation it is. A
rule change that moves a verdict on a real server therefore fails here until the table is
changed on purpose (re-record with ``lab/run record`` and read the moves it prints).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import spec
from conformance.cli import main
from conformance.model.coverage import dangling_in_report
from conformance.rules import CATALOG
from conformance.target.embedded import EmbeddedMock

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lab"
TABLE: dict[str, Any] = yaml.safe_load((FIXTURES / "verdicts.yaml").read_text(encoding="utf-8"))
PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")


def expected(entry: dict[str, Any]) -> dict[str, tuple[str, str]]:
    out = {}
    for rule, value in entry["rules"].items():
        if isinstance(value, str):
            out[rule] = (value, "")
        else:
            out[rule] = (value["verdict"], value["reason"])
    return out


@pytest.mark.parametrize("name", sorted(TABLE))
def test_a_replayed_lab_server_gets_the_verdicts_of_the_table(name: str, tmp_path: Path) -> None:
    entry = TABLE[name]
    report_path = tmp_path / "report.json"
    replay_args = ["--replay", str(FIXTURES / entry["fixture"]), "--replay-timing", "none"]
    with EmbeddedMock(replay_args) as replay:
        base_url = replay.openai_url.rsplit("/v1", 1)[0] + entry["base_path"]
        out, err = io.StringIO(), io.StringIO()
        status = main(["run", "-q", "--base-url", base_url, *entry["args"],
                       "--json", str(report_path)], out, err)
    assert status in (0, 1), err.getvalue()
    report = json.loads(report_path.read_text(encoding="utf-8"))
    got = {r["rule"]: (r["verdict"], PORT.sub(r"\1:PORT", r["message"]))
           for r in report["results"]}
    want = expected(entry)
    moved = {rule: (want.get(rule), got.get(rule)) for rule in set(want) | set(got)
             if want.get(rule) != got.get(rule)}
    rows = [(r["rule"], r["area"], r["verdict"], r["message"]) for r in report["results"]]
    assert dangling_in_report(rows) == {}, f"{name}: SKIPs pointing at no failure"
    assert not moved, f"verdicts moved on {name} (table, replay): {moved}"


@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_fail_on_a_lab_server_is_explained(name: str) -> None:
    unexplained = [
        rule for rule, value in TABLE[name]["rules"].items()
        if isinstance(value, dict) and value["verdict"] in ("FAIL", "NON_STRICT")
        and (not value.get("why") or value["why"].startswith("TODO"))
    ]
    assert not unexplained, f"{name}: say which real deviation each of these is: {unexplained}"


def test_the_table_covers_every_rule_of_each_profile() -> None:
    for name, entry in TABLE.items():
        profile_name = entry["args"][entry["args"].index("--profile") + 1]
        rules = CATALOG.select(profile=spec.get_profile(profile_name))
        assert set(entry["rules"]) == {r.id for r in rules}, name
