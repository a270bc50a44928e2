"""The URLs a run derives from its base URL, for each shipped profile."""

from __future__ import annotations

import spec
from conformance.run.settings import Settings


def settings(profile_name: str, base_url: str) -> Settings:
    return Settings(base_url=base_url, profile=spec.get_profile(profile_name), model="m",
                    features=frozenset())


def test_completions_and_models_urls_sit_under_the_base_url() -> None:
    openai = settings("openai", "http://h/v1/")
    assert openai.url("completions") == "http://h/v1/completions"
    assert openai.models_url == "http://h/v1/models"


def test_a_profile_without_a_listing_asks_base_url_models_not_v1_twice() -> None:
    friendli = settings("friendli", "http://h/dedicated/v1")
    assert friendli.url("completions") == "http://h/dedicated/v1/completions"
    assert friendli.models_url == "http://h/dedicated/v1/models"
