"""Plain-dict round trip for configuration dataclasses (stored in checkpoints and result files).

Imports: dataclasses, ttlab.errors; nothing else of ttlab.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any, TypeVar

from ttlab.errors import TTLabInputError

C = TypeVar("C", bound="DictConfig")


class DictConfig:
    """Mixin for a configuration dataclass: :meth:`to_dict` and a strict :meth:`from_dict`.

    The dataclass validates itself in ``__post_init__``, so ``from_dict`` of bad values raises there.
    """

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (stored in checkpoints and result.json)."""
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls: type[C], d: dict[str, Any]) -> C:
        """Inverse of :meth:`to_dict`; unknown keys raise :class:`TTLabInputError`."""
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(d) - known)
        if unknown:
            raise TTLabInputError(f"unknown {cls.__name__} field(s): {', '.join(unknown)}.")
        return cls(**d)
