"""Every SKIP names what failed (issue 33): a reason that names rules as the judges of the
defect that left nothing to judge must name one that FAILed, ERRORed or was NON_STRICT in the
same run, or a reader follows the pointer and finds nothing wrong.

The mock's faults (tests/conformance/catalog/test_catalog_faults.py) and the lab recordings
(tests/conformance/catalog/test_catalog_lab_replays.py) check it on the runs they make already;
here a server whose logprobs come in the chat shape, which LOGPROBS-001 accepts as an object and
SCHEMA-001 fails.
"""

from __future__ import annotations

import asyncio

from harness_support import settings_for
from word_vocab_server import WordServer, start

from conformance.model import RunResult, Verdict
from conformance.model.coverage import dangling_in_report, dangling_pointers
from conformance.rules import CATALOG
from conformance.run.runner import execute


def run(server: WordServer) -> RunResult:
    async def main() -> RunResult:
        runner, url = await start(server)
        try:
            settings = settings_for(url, "openai")
            return await execute(settings, CATALOG.select(profile=settings.profile))
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def test_skips_behind_chat_shaped_logprobs_point_at_schema_001() -> None:
    result = run(WordServer(chat_logprobs=True, tokenizer=True))
    by_id = {r.rule.id: r for r in result.results}
    assert by_id["LOGPROBS-001"].verdict is Verdict.PASS
    assert by_id["SCHEMA-001"].verdict is Verdict.FAIL
    for rule_id in ("LOGPROBS-003", "LOGPROBS-005", "LOGPROBS-008", "ECHO-002"):
        assert by_id[rule_id].verdict is Verdict.SKIP
        assert "(judged by SCHEMA-001)" in by_id[rule_id].message, by_id[rule_id].message
    assert dangling_pointers(result.results) == {}


def test_a_pointer_at_a_pass_is_dangling() -> None:
    rows = [("LOGPROBS-001", "LOGPROBS", "PASS", ""),
            ("LOGPROBS-003", "LOGPROBS", "SKIP", "no logprobs object (judged by LOGPROBS-001)"),
            ("USAGE-005", "USAGE", "SKIP", "no finish chunk (judged by FINISH / INDICES rules)"),
            ("INDICES-001", "INDICES", "FAIL", "the choice indices are not 0..n*prompts-1"),
            ("PARAMS-005", "PARAMS", "SKIP", "feature not claimed: best_of"),
            ("INDICES-003", "INDICES", "SKIP", "the two prompts have the same greedy text")]
    assert dangling_in_report(rows) == {
        "LOGPROBS-003": "no logprobs object (judged by LOGPROBS-001)"}


def test_a_pointer_at_a_skip_holds_when_that_skip_points_at_a_failure() -> None:
    """Prism mocking dynamically (random choice indices): PARAMS-002 names ECHO-005, which
    SKIPs naming INDICES-001, which fails: the reader following the pointers ends at it."""
    rows = [("INDICES-001", "INDICES", "FAIL", "the choice indices are not 0..n*prompts-1"),
            ("ECHO-005", "ECHO", "SKIP", "vocab/decode: choice index 8 is outside 0..0 "
                                         "(judged by INDICES-001)"),
            ("PARAMS-002", "PARAMS", "SKIP", "logit-bias/ban was not sent: no ids were decoded "
                                             "(the vocab probe's echo ... (ECHO-005))"),
            ("DET-001", "DET", "SKIP", "see DET-002"),
            ("DET-002", "DET", "SKIP", "see DET-001")]
    assert dangling_in_report(rows) == {"DET-001": "see DET-002", "DET-002": "see DET-001"}
