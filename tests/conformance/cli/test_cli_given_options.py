"""The reports echo the options a run was given (``conformance.run.given_options``): only those
that change what was sent or judged, only when not the default, and never a secret."""

from __future__ import annotations

import io
import json
from pathlib import Path

from conformance.cli import _parser, main
from conformance.run.given_options import given_options
from conformance.target.embedded import EmbeddedMock


def _given(*argv: str) -> tuple[str, ...]:
    args = _parser().parse_args(list(argv))
    return given_options(args, _parser().parse_args([args.command]))


def test_only_options_given_a_value_other_than_the_default_are_echoed() -> None:
    assert _given("run") == ()
    assert _given("run", "--timeout", "60", "--concurrency", "4") == ()  # the defaults
    assert _given("run", "--select", "SSE-*", "--select", "USAGE-001", "--timeout", "10",
                  "--concurrency", "1") == ("--concurrency 1", "--timeout 10",
                                            "--select SSE-*,USAGE-001")  # in --help's order
    assert _given("fuzz", "--seed", "3", "--no-shrink") == ("--seed 3", "--no-shrink")


def test_secrets_and_what_reports_say_elsewhere_are_not_echoed() -> None:
    given = _given("run", "--api-key", "sk-secret", "--header", "X-Token: hunter2",
                   "--json", "r.json", "--strict", "--profile", "openai", "--proxy",
                   "http://u:p@proxy:3128", "-q")
    assert given == ("--header X-Token (values not shown)",)
    assert "sk-secret" not in repr(given) and "hunter2" not in repr(given)


def test_a_run_s_reports_show_its_options(mock: EmbeddedMock, tmp_path: Path) -> None:
    report, page, summary = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "r.md"
    out, err = io.StringIO(), io.StringIO()
    status = main(["run", "--base-url", mock.openai_url, "--select", "USAGE-*", "--timeout",
                   "20", "--concurrency", "2", "-q", "--json", str(report), "--html", str(page),
                   "--markdown", str(summary)], out, err)
    assert status == 0, out.getvalue() + err.getvalue()
    options = ["--concurrency 2", "--timeout 20", "--select USAGE-*"]
    assert json.loads(report.read_text())["options"] == options
    assert "given: " + " ".join(options) in page.read_text()
    assert "**Options:** --concurrency 2 --timeout 20 --select USAGE-" in summary.read_text()
