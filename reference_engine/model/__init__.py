"""The reference engine's n-gram language model.

``LanguageModel`` answers next-token distributions; ``kneser_ney.estimate`` turns stored counts
(``storage``) into query tables; ``detlog`` is the machine-independent logarithm they use.
"""

from .kneser_ney import ModelTables, estimate
from .language_model import LanguageModel
from .storage import CountLevel, NgramCounts, load_counts, save_counts

__all__ = [
    "CountLevel",
    "LanguageModel",
    "ModelTables",
    "NgramCounts",
    "estimate",
    "load_counts",
    "save_counts",
]
