"""``conformance judge``: path picking, curl reproductions with secrets redacted, the
reporters, exit statuses, and bad input, which never crashes it."""

from __future__ import annotations

import gzip
import io
import json
import shlex
from pathlib import Path

import pytest
from judge_support import (
    KEY,
    PLAIN_REQUEST,
    STREAM_REQUEST,
    clean_answer,
    clean_events,
    har_entry,
    sse,
    text_after_finish,
    write_har,
)

from conformance.cli import main


def judge(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["judge", "-q", *args], out, err)
    return code, out.getvalue(), err.getvalue()


def clean(**kwargs: object) -> dict:
    return har_entry(STREAM_REQUEST, sse(clean_events()), **kwargs)  # type: ignore[arg-type]


def bent(**kwargs: object) -> dict:
    return har_entry(STREAM_REQUEST, sse(text_after_finish(clean_events())),
                     **kwargs)  # type: ignore[arg-type]


def test_other_paths_are_counted_and_named_in_one_line(tmp_path: Path) -> None:
    chat = "https://api.openai.com/v1/chat/completions"
    embeddings = "https://api.openai.com/v1/embeddings"
    har = write_har(tmp_path / "day.har", [
        clean(), *[bent(url=chat) for _ in range(9)], *[bent(url=embeddings) for _ in range(3)],
        clean(url=chat.replace("chat/", ""), method="OPTIONS")])
    summary, page = tmp_path / "summary.md", tmp_path / "page.html"
    code, out, _ = judge(str(har), "--markdown", str(summary), "--html", str(page))
    assert code == 0
    line = ("skipped 13 exchanges of other paths: /v1/chat/completions (9), /v1/embeddings "
            "(3), OPTIONS /v1/completions (1)")
    assert line in out
    assert line in summary.read_text()
    assert line in page.read_text()


def test_path_adds_a_gateways_own(tmp_path: Path) -> None:
    har = write_har(tmp_path / "gateway.har", [
        clean(), bent(url="https://gw.example/openai/v1/completions/")])
    assert judge(str(har))[0] == 0
    code, out, _ = judge(str(har), "--path", "/openai/v1/completions")
    assert code == 1
    assert "FINISH-004" in out
    assert judge(str(har), "--path", "openai/v1")[0] == 2


def test_a_finding_names_its_entry_and_reproduces_it_with_the_key_redacted(
        tmp_path: Path) -> None:
    entry = bent(comment="prod pod 7", url=URL_WITH_KEY)
    entry["request"]["headers"].append({"name": "x-api-key", "value": KEY})
    har = write_har(tmp_path / "traffic.har", [clean(), entry])
    outputs = {name: tmp_path / name for name in ("r.json", "r.html", "r.md", "r.xml")}
    code, out, _ = judge(str(har), "--json", str(outputs["r.json"]), "--html",
                         str(outputs["r.html"]), "--markdown", str(outputs["r.md"]),
                         "--junit-xml", str(outputs["r.xml"]))
    assert code == 1
    assert f'{har} log.entries[1] ("prod pod 7")' in out
    report = json.loads(outputs["r.json"].read_text())
    finding = next(r for r in report["results"] if r["rule"] == "FINISH-004")["finding"]
    curl = finding["curl"]
    assert '-H "authorization: Bearer $OPENAI_API_KEY"' in curl  # as recorded (HTTP/2)
    assert '-H "x-api-key: $X_API_KEY"' in curl
    assert "user-agent" not in curl.lower()  # added by the client, as the harness leaves out
    assert ":authority" not in curl
    assert shlex.split(curl)[0] == "curl"
    assert json.loads(shlex.split(curl)[shlex.split(curl).index("--data-raw") + 1]) == (
        STREAM_REQUEST)
    for text in (out, *(path.read_text() for path in outputs.values())):
        assert KEY not in text
        assert "query-secret" not in text


URL_WITH_KEY = "https://api.openai.com/v1/completions?api-key=query-secret"


def test_exit_statuses(tmp_path: Path) -> None:
    assert judge(str(write_har(tmp_path / "ok.har", [clean()])))[0] == 0
    assert judge(str(write_har(tmp_path / "bad.har", [bent()])))[0] == 1
    code, _out, err = judge(str(write_har(tmp_path / "none.har", [])))
    assert code == 2
    assert err.count("\n") == 1
    assert "no completions exchange to judge" in err


def test_a_should_rule_counts_only_with_strict(tmp_path: Path) -> None:
    """An answer without usage breaks USAGE-010, a SHOULD: NON_STRICT, a failure only with
    --strict."""
    answer = {k: v for k, v in clean_answer().items() if k != "usage"}
    har = write_har(tmp_path / "no-usage.har", [
        har_entry(PLAIN_REQUEST, json.dumps(answer), content_type="application/json")])
    code, out, _ = judge(str(har))
    assert code == 0
    assert "NON_STRICT: USAGE-010" in out
    assert judge(str(har), "--strict")[0] == 1


@pytest.mark.parametrize(("content", "says"), [
    (b"hello, world\n", "is neither a HAR file, a VCR cassette nor a conformance report"),
    (b"", "is neither a HAR file"),
    (b"\x89PNG\r\n\x1a\n\0\0\0", "is neither a HAR file"),
    (b'{"log": {"entries": [{"request": {"method": "POST"', "ends early, cut short"),
    (b'{"log": {"entries": [}}', "is not valid JSON"),
    (b"interactions:\n- request: [unclosed\n", "is not valid YAML"),
    (b"interactions: 3\n", "not a cassette"),
])
def test_an_unreadable_input_is_exit_2_with_one_line(tmp_path: Path, content: bytes,
                                                     says: str) -> None:
    path = tmp_path / "input"
    path.write_bytes(content)
    code, _out, err = judge(str(path))
    assert code == 2
    assert err.startswith("conformance: error: ") and err.count("\n") == 1
    assert says in err


def test_a_missing_file_is_exit_2(tmp_path: Path) -> None:
    code, _, err = judge(str(tmp_path / "nowhere.har"))
    assert code == 2
    assert "no such file or directory" in err


def test_entries_that_cannot_be_judged_are_skipped_saying_why(tmp_path: Path) -> None:
    no_body = clean()
    del no_body["response"]["content"]["text"]
    cut = clean(size=100_000)
    no_response = clean(status=0)
    lying = har_entry(PLAIN_REQUEST, json.dumps(clean_answer())[:40],
                      content_type="application/json")
    lying["response"]["headers"].append({"name": "Content-Length", "value": "400"})
    har = write_har(tmp_path / "partial.har", [clean(), no_body, cut, no_response, lying, 42])
    code, out, _err = judge(str(har))
    assert code == 0, out
    assert "skipped 4 recorded exchanges that cannot be judged" in out
    assert f"{har} log.entries[1]: the recording holds no body of the HTTP 200 response" in out
    assert "the recorder kept" in out and "(content.size)" in out
    assert "the recording holds no response" in out
    assert "the body was cut short: 40 of the 400 bytes Content-Length announces" in out
    assert f"{har} log.entries[5] is not a HAR entry" in out


def test_a_gzip_body_is_decoded_by_its_recorded_content_encoding(tmp_path: Path) -> None:
    """A HAR holding the wire's gzip bytes (base64) under Content-Encoding: gzip."""
    entry = clean()
    entry["response"]["content"] = {
        "size": 0, "mimeType": "text/event-stream", "encoding": "base64",
        "text": __import__("base64").b64encode(gzip.compress(
            sse(text_after_finish(clean_events())).encode())).decode()}
    entry["response"]["headers"].append({"name": "content-encoding", "value": "gzip"})
    code, out, _ = judge(str(write_har(tmp_path / "gz.har", [entry])))
    assert code == 1
    assert "FINISH-004" in out


def test_help_explains_the_inputs_and_exit_statuses() -> None:
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        import contextlib

        with contextlib.redirect_stdout(out):
            main(["judge", "--help"])
    assert exited.value.code == 0
    text = out.getvalue()
    for words in ("HAR", "VCR cassettes", "--path", "Exit status", "curl", "4xx/5xx"):
        assert words in text


@pytest.mark.parametrize("bend", [
    lambda e: e["request"]["postData"].update(text="[" * 100_000 + "]" * 100_000),
    lambda e: e["request"].update(url="http://[not-an-address/v1/completions"),
    lambda e: e["request"].update(method=None, url=None, headers=[{"name": 1}, "x", None]),
    lambda e: e["response"]["content"].update(text="AAAA" * 10, encoding="base64", size=30),
    lambda e: e["response"]["content"].update(text="data: " + "[" * 100_000 + "\n\n",
                                              size=None),
], ids=["deep-request", "unparsed-url", "null-fields", "nul-bytes", "deep-event"])
def test_a_strange_entry_never_crashes_it(tmp_path: Path, bend: object) -> None:
    entry = bent()
    bend(entry)  # type: ignore[operator]
    code, out, err = judge(str(write_har(tmp_path / "odd.har", [clean(), entry])))
    assert code in (0, 1), err
    assert "Traceback" not in out + err


def test_a_string_that_is_not_utf8_makes_the_file_unreadable(tmp_path: Path) -> None:
    """yajl refuses a lone surrogate escape: the rest of the file cannot be read either."""
    entry = clean()
    entry["response"]["content"]["text"] = "\udcff"
    code, _, err = judge(str(write_har(tmp_path / "odd.har", [clean(), entry])))
    assert code == 2
    assert "is not valid JSON (a string that is not UTF-8" in err


def test_a_baseline_accepts_the_recorded_deviations_it_names(tmp_path: Path) -> None:
    har = write_har(tmp_path / "known.har", [clean(), bent()])
    report, baseline = tmp_path / "known.json", tmp_path / "baseline.yaml"
    assert judge(str(har), "--json", str(report))[0] == 1
    assert main(["baseline", str(report), "-o", str(baseline)], io.StringIO(),
                io.StringIO()) == 0
    assert "FINISH-004" in baseline.read_text()
    assert judge(str(har), "--baseline", str(baseline))[0] == 0
    worse = write_har(tmp_path / "known.har", [clean(), bent(), clean(status=500)])
    assert judge(str(worse), "--baseline", str(baseline))[0] == 1
