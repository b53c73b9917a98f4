"""Built-in datasets from the paper.
"""

from __future__ import annotations

from ttlab.ntp.dataset import NTPDataset

#: Example 1 of paper A: subject, verb, object, punctuation.
SVOP_SEQUENCES = ["S V O P", "V O P", "O P P", "P S V"]

#: Example 2: unseen sentences and the continuation the trained model should predict.
SVOP_UNSEEN = {("S", "P"): "V", ("O", "S", "P"): "P"}


def svop() -> NTPDataset:
    """The paper's Example 1 dataset {SVOP, VOP, OPP, PSV} (every proper prefix is a sentence)."""
    return NTPDataset.from_sequences(SVOP_SEQUENCES, source="svop")
