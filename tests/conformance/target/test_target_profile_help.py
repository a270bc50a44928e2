"""Every ``--profile`` help lists the shipped profiles from ``spec/profiles/*.yaml``, so a new
profile file shows up in ``conformance run / fuzz / judge --help`` and in pytest's by itself
(one was once missing from a list written by hand)."""

from __future__ import annotations

import re
from typing import Any

import pytest

import spec
from conformance.cli import _parser
from conformance.target.options import (
    TARGET_OPTIONS,
    add_pytest_target_options,
    shipped_profile_names,
)


def test_the_cheap_listing_is_spec_s_own() -> None:
    """The target options read the names without importing ``spec`` (the plugin must stay
    cheap): what they read is what ``spec.profile_names()`` gives."""
    assert shipped_profile_names() == spec.profile_names()
    assert "vllm" in shipped_profile_names()


def _profile_help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        _parser().parse_args([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    found = re.search(r"--profile P (.*?) --", text)
    assert found, text
    return found.group(1)


@pytest.mark.parametrize("command", ["run", "fuzz", "judge"])
def test_the_profile_help_names_every_shipped_profile(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = _profile_help(command, capsys)
    assert ", ".join(spec.profile_names()) in listed, listed


def test_the_pytest_profile_help_names_every_shipped_profile() -> None:
    helps: dict[str, str] = {}

    def add(*names: str, **kwargs: Any) -> None:
        helps[names[0]] = kwargs["help"]

    add_pytest_target_options(add)
    assert ", ".join(spec.profile_names()) in helps["--conformance-profile"]
    assert all("{" not in text for text in helps.values())


def test_only_the_profile_option_lists_profiles() -> None:
    """The placeholder is filled where a parser is built; no other help carries one."""
    assert [option.name for option in TARGET_OPTIONS if option.help_text != option.help] == [
        "profile"]
