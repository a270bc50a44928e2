"""Deterministic reference engine behind the mock Completions server.

A small byte-level BPE tokenizer and an interpolated Kneser-Ney n-gram language model, trained
from a corpus shipped in the package, so the mock produces real tokens with real probabilities
without downloads, network access or an accelerator.
"""
