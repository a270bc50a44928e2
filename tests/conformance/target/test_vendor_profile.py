"""A new vendor is one YAML file: an OpenAI-shaped profile with its own error status, unknown-field
policy and features, given to ``--profile`` as a path, drives the catalog and the fuzzer (rules
are chosen by the profile's traits, never by its name)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import yaml

import spec
from conformance.cli import main
from conformance.rules import CATALOG
from conformance.target.embedded import EmbeddedMock

SHIPPED = Path(spec.__file__).parent / "profiles" / "openai-compatible.yaml"


def vendor_profile(folder: Path) -> Path:
    raw = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    raw.update(name="vendor-x", title="Vendor X")
    raw["errors"]["invalid_request"] = [422]  # the mock answers 400: ERRORS-001 must say so
    raw["unknown_fields"] = "reject"
    raw["features"] = [f for f in raw["features"] if f != "logit_bias"]
    path = folder / "vendor-x.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_a_vendor_profile_file_drives_the_catalog(mock: EmbeddedMock, tmp_path: Path) -> None:
    path = vendor_profile(tmp_path)
    report = tmp_path / "r.json"
    status, out, err = cli("run", "-q", "--base-url", mock.openai_url, "--profile", str(path),
                           "--json", str(report))
    assert status == 1, out + err
    results = {r["rule"]: r for r in json.loads(report.read_text())["results"]}
    assert results["ERRORS-001"]["verdict"] == "FAIL"
    assert results["ERRORS-001"]["finding"]["expected"] == [422]
    assert results["PARAMS-002"]["message"] == "feature not claimed: logit_bias"
    chosen = {rule.id for rule in CATALOG.select(profile=spec.get_profile(str(path)))}
    assert set(results) == chosen
    assert {"ERRORS-009", "ERRORS-007", "LOGPROBS-009", "ECHO-001"} <= chosen  # by traits
    assert not {"FRIENDLI-001", "USAGE-011"} & chosen


def test_a_vendor_profile_file_drives_the_fuzzer(mock: EmbeddedMock, tmp_path: Path) -> None:
    path = vendor_profile(tmp_path)
    report = tmp_path / "f.json"
    status, out, err = cli("fuzz", "--base-url", mock.openai_url, "--profile", str(path),
                           "--model", "reference-ngram", "--max-examples", "10", "--seed", "1",
                           "--workers", "1", "-q", "--no-shrink", "--json", str(report))
    assert status in (0, 1), out + err
    data = json.loads(report.read_text())
    assert data["target"]["profile"] == "vendor-x" and data["search"]["examples"] > 0


def served_vendor_profile(folder: Path) -> Path:
    """A vendor on its own paths, 422 for invalid input, unknown fields ignored."""
    raw = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    raw.update(name="vendor-w", title="Vendor W", base_path="/w/v1", unknown_fields="ignore")
    raw["operations"] = {
        "completions": {"path": "/w/v1/completions", "method": "post",
                        "operation_id": "createCompletion"},
        "models": {"path": "/w/v1/models", "method": "get", "operation_id": "listModels"},
    }
    raw["errors"]["invalid_request"] = [422]
    path = folder / "vendor-w.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_the_embedded_mock_serves_the_profile_file_and_passes_under_it(tmp_path: Path) -> None:
    """No ``--base-url``: the embedded mock is started with ``--profile FILE`` and the run goes
    to the file's paths; the clean mock passes the catalog and the fuzzer under it."""
    path = served_vendor_profile(tmp_path)
    report = tmp_path / "r.json"
    status, out, err = cli("run", "-q", "--profile", str(path), "--json", str(report))
    assert status == 0, out + err
    data = json.loads(report.read_text())
    assert {r["verdict"] for r in data["results"]} <= {"PASS", "SKIP"}
    assert data["target"]["base_url"].endswith("/w/v1")
    fuzz_report = tmp_path / "f.json"
    status, out, err = cli("fuzz", "--profile", str(path), "--max-examples", "10", "--seed", "1",
                           "--workers", "1", "-q", "--no-shrink", "--json", str(fuzz_report))
    assert status == 0, out + err
    assert json.loads(fuzz_report.read_text())["search"]["examples"] > 0


def test_a_vendor_profile_with_its_own_request_schema_is_served_and_passes(
        tmp_path: Path) -> None:
    """The mock validates with the profile's own request schema, not its wire's: here a
    vendor that requires ``max_tokens``, lists fewer fields and rejects the rest."""
    path = served_vendor_profile(tmp_path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw.update(name="vendor-s", title="Vendor S", unknown_fields="reject")
    raw["required_fields"] = [*raw["required_fields"], "max_tokens"]
    raw["request_fields"] = [f for f in raw["request_fields"] if f not in ("top_k", "min_p")]
    path = tmp_path / "vendor-s.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    report = tmp_path / "r.json"
    status, out, err = cli("run", "-q", "--profile", str(path), "--json", str(report))
    assert status == 0, out + err
    assert {r["verdict"] for r in json.loads(report.read_text())["results"]} <= {"PASS", "SKIP"}
