"""The architecture of a regressor of the manifold experiments (:class:`RegressorConfig`, validated when made) and the
architectures there are (:data:`ARCHS`); the networks themselves are in :mod:`ttlab.scaling.regressors`. No torch here:
the experiments' configs (and the help of ``ttlab scaling``) build and check architectures without loading it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ttlab.errors import TTLabInputError
from ttlab.validation import POSITIVE_INT, Declared, Options

__all__ = ["ARCHS", "POSITIONAL", "RegressorConfig"]

ARCHS = ("softmax", "relu", "mlp")
POSITIONAL = ("learned", "sinusoidal")


@dataclass(frozen=True)
class RegressorConfig(Declared):
    """Architecture of a regressor; ``chunk``/``n_head``/``pos`` apply to transformers only.

    ``pos=None`` picks the default: learned for ``softmax``, fixed sinusoidal for ``relu``.
    Validated on construction: an inconsistent architecture raises :class:`TTLabInputError`.
    """

    arch: str = "softmax"
    ambient: int = 16
    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    chunk: int = 4
    mlp_ratio: int = 4
    pos: str | None = None

    parameter_constraints = {"arch": [Options(ARCHS)],
                             **dict.fromkeys(("ambient", "n_embd", "n_layer", "mlp_ratio"), POSITIVE_INT),
                             "pos": [Options(POSITIONAL), None]}

    def check(self) -> None:
        """A transformer's ``chunk`` within ``ambient`` and ``n_head`` dividing ``n_embd``."""
        if self.arch == "mlp":
            return
        if isinstance(self.chunk, bool) or not isinstance(self.chunk, int) or not 1 <= self.chunk <= self.ambient:
            raise TTLabInputError(
                f"chunk (coordinates per token) must be an integer in [1, D={self.ambient}], got {self.chunk!r}",
                params=("chunk",))
        h = self.n_head
        if isinstance(h, bool) or not isinstance(h, int) or h < 1 or self.n_embd % h:
            raise TTLabInputError(f"n_head must be an integer >= 1 dividing n_embd={self.n_embd}, got {h!r}",
                                  params=("n_head",))

    @property
    def n_tokens(self) -> int:
        """Sequence length l = ⌈D / chunk⌉ (transformers)."""
        return -(-self.ambient // self.chunk)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self)

