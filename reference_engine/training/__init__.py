"""Rebuilding the reference engine's artifacts from the shipped corpus.

``python -m reference_engine.training [--out DIR]`` trains the BPE tokenizer
(``bpe_trainer``), counts n-grams (``ngram_counter``) and writes the artifact files with their
manifest (``build``), deterministically. ``corpus`` says what the training text is.
"""

from .build import TrainingResult, build_artifacts, train, write_artifacts

__all__ = ["TrainingResult", "build_artifacts", "train", "write_artifacts"]
