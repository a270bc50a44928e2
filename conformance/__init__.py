"""Conformance harness for OpenAI-compatible text Completions servers, tested over real HTTP."""
