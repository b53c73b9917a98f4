"""Configuration dataclasses: their plain-dict round trip (stored in checkpoints and result files) and their documented
fields (:func:`setting`: a default with what it means; the command line shows that as the option's help).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, field, fields
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


def setting(default: Any, text: str) -> Any:
    """A dataclass field: its ``default`` and what the setting means (``metadata["help"]``; the command line shows it as
    the help of the option that sets the field, with the default beside it)."""
    return field(default=default, metadata={"help": text})


def field_help(cls: type, name: str) -> str:
    """What field ``name`` of the dataclass ``cls`` means (:func:`setting`; "" when undocumented)."""
    return next(f.metadata.get("help", "") for f in fields(cls) if f.name == name)


def pick_fields(cls: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``values`` named like the fields of the dataclass ``cls`` (a command's parameters, by name)."""
    return {f.name: values[f.name] for f in fields(cls) if f.name in values}
