"""Paper B's protocol of intrinsic-dimension measurement: :class:`IDProtocol` and its instance :data:`PAPER`.

The one home of the paper's K and batch size: every default of them in ttlab (the MLE's ``k``, the batch
size of ``paper=True`` / ``--paper``, the CLI's ``--k`` and ``--batch-size``) reads :data:`PAPER`.
Exported by :mod:`ttlab.intrinsic_dim`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAPER", "PAPER_BATCH_SIZE", "PAPER_K", "IDProtocol"]


@dataclass(frozen=True)
class IDProtocol:
    """How paper B measures the intrinsic dimension of a point cloud: seeded random batches of ``batch_size``
    points (a last partial batch handled by ``remainder``), the MLE with ``k`` neighbours in each, pointwise
    estimates combined by ``average``, batch values averaged. :data:`PAPER` is the paper's choice; every default
    of K and batch size in ttlab reads it from here."""

    k: int = 20
    batch_size: int = 4096  # Havrilla & Liao, Section 3 (their released code used 3,600)
    average: str = "mean"  # the authors' arithmetic mean; "harmonic" is MacKay–Ghahramani
    seed: int = 0
    remainder: str = "drop"  # every batch the same size, so the batch values are exchangeable


PAPER = IDProtocol()
"""Paper B's ID protocol (Havrilla & Liao, Section 3): MLE, K = 20, batches of 4,096, arithmetic mean."""
PAPER_BATCH_SIZE = PAPER.batch_size
PAPER_K = PAPER.k
