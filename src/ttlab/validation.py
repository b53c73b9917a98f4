"""Checks of user-given parameters, in scikit-learn's manner: one wording for every ttlab module.

Scalar checks return the checked value or raise :class:`ttlab.errors.TTLabInputError` naming the
parameter, what it must be and the value it got:

* :func:`check_int` — an integer (bools rejected, NumPy integers accepted) within optional bounds:
  ``"k must be an integer >= 2, got 1."``
* :func:`check_float` — a finite real number (bools, NaN and ±inf rejected) within bounds, each end open
  or closed: ``"alpha_fo must be a number in (0, 1), got 2."``
* :func:`check_choice` — one of a few values: ``"unknown average 'x'; choose one of mean, harmonic, median."``

Estimator parameters are declared rather than checked one by one, as scikit-learn does with
``_parameter_constraints``: a dict mapping each parameter to a list of constraints, any one of which the
value must satisfy — :class:`Interval` (``Interval(numbers.Integral, 1, None, closed="left")``),
:class:`Options` (``Options({"mean", "median"})``), ``None`` (the value may be None), ``"boolean"``, a type,
or ``"no_validation"`` instead of a list. :func:`validate_params` checks a dict of values against them.

Config dataclasses declare theirs the same way: a :class:`Declared` subclass lists ``parameter_constraints``
(field -> constraints), checked after ``__init__`` in this one place; its ``check()`` keeps only the rules that
relate fields (``n_embd`` divisible by ``n_head``, ``min_lr <= lr``).
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, cast

from ttlab.errors import TTLabInputError

__all__ = ["Declared", "Interval", "Options", "POSITIVE_INT", "SEED", "check_choice", "check_float", "check_hours",
           "check_int", "parse_named_values",
           "validate_params"]

_CLOSED = ("left", "right", "both", "neither")


def _is_bool(value: Any) -> bool:
    """A Python or NumPy bool (NumPy is not imported for this: a value cannot be NumPy's unless NumPy is loaded)."""
    np = sys.modules.get("numpy")
    return isinstance(value, bool) or (np is not None and isinstance(value, np.bool_))


def _show(value: Any) -> str:
    """The value as an error message shows it (NumPy scalars as the Python number they hold)."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.generic) and not isinstance(value, np.bool_):
        value = value.item()
    return repr(value)


def _bound(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class Interval:
    """Numbers of ``type`` (``numbers.Integral`` or ``numbers.Real``) between ``left`` and ``right``.

    ``None`` leaves an end unbounded; ``closed`` is ``"left"``, ``"right"``, ``"both"`` or ``"neither"``
    (scikit-learn's ``Interval``). Bools never satisfy it; a ``Real`` interval holds finite numbers only
    (NaN and ±inf are rejected even when an end is unbounded)."""

    def __init__(self, type: type, left: float | None, right: float | None, *, closed: str = "left") -> None:
        if type not in (numbers.Integral, numbers.Real):
            raise TypeError(f"Interval type must be numbers.Integral or numbers.Real, got {type!r}")
        if closed not in _CLOSED:
            raise ValueError(f"closed must be one of {', '.join(_CLOSED)}, got {closed!r}")
        if left is not None and right is not None and left > right:
            raise ValueError(f"Interval left end {left} is above its right end {right}")
        self.type = type
        self.left = left
        self.right = right
        self.closed = closed

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether ``value`` is a number of this type inside the interval."""
        if _is_bool(value) or not isinstance(value, self.type):
            return False
        if self.type is numbers.Real and not math.isfinite(value):
            return False
        left_in = self.closed in ("left", "both")
        right_in = self.closed in ("right", "both")
        x = cast(float, value)  # an int or a float: compared exactly, never converted
        if self.left is not None and not (x >= self.left if left_in else x > self.left):
            return False
        return self.right is None or (x <= self.right if right_in else x < self.right)

    def __str__(self) -> str:
        """What a value must be: ``an integer >= 2``, ``a number in (0, 1]``, ``a finite number``."""
        what = "an integer" if self.type is numbers.Integral else "a number"
        left_in = self.closed in ("left", "both")
        right_in = self.closed in ("right", "both")
        if self.left is None and self.right is None:
            return what if self.type is numbers.Integral else "a finite number"
        if self.right is None:
            return f"{what} {'>=' if left_in else '>'} {_bound(self.left)}"  # type: ignore[arg-type]
        if self.left is None:
            return f"{what} {'<=' if right_in else '<'} {_bound(self.right)}"
        return (f"{what} in {'[' if left_in else '('}{_bound(self.left)}, {_bound(self.right)}"
                f"{']' if right_in else ')'}")

    def __repr__(self) -> str:
        return f"Interval({self.type.__name__}, {self.left!r}, {self.right!r}, closed={self.closed!r})"


class Options:
    """A value among ``options`` (compared with ``==``; shown in the given order)."""

    def __init__(self, options: Iterable[Any]) -> None:
        self.options = tuple(dict.fromkeys(options))

    def is_satisfied_by(self, value: Any) -> bool:
        """Whether ``value`` is one of the options."""
        try:
            return bool(value in self.options)
        except (TypeError, ValueError):  # an array compared with the options, and the like
            return False

    def __str__(self) -> str:
        """``one of a, b, c``."""
        return "one of " + ", ".join(str(o) for o in self.options)

    def __repr__(self) -> str:
        return f"Options({self.options!r})"


def _satisfied(constraint: Any, value: Any) -> bool:
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return _is_bool(value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.is_satisfied_by(value)


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if constraint == "boolean":
        return "a boolean"
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__}"
    return str(constraint)


def _error(name: str, value: Any, constraints: list[Any]) -> TTLabInputError:
    """The one wording of a failed check: ``unknown NAME VALUE; choose one of …`` for a choice among options,
    else ``NAME must be CONSTRAINT [or …], got VALUE.``"""
    choices = [c for c in constraints if isinstance(c, Options)]
    if choices and all(c is None or isinstance(c, Options) for c in constraints):
        listed = ", ".join(str(o) for c in choices for o in c.options) + (", or None" if None in constraints else "")
        return TTLabInputError(f"unknown {name} {_show(value)}; choose one of {listed}.", params=(name,))
    return TTLabInputError(f"{name} must be {' or '.join(_describe(c) for c in constraints)}, got {_show(value)}.",
                           params=(name,))


def validate_params(params: Mapping[str, Any], constraints: Mapping[str, Any]) -> None:
    """Check every parameter of ``params`` that ``constraints`` names (in the constraints' order).

    ``constraints[name]`` is a list of constraints (:class:`Interval`, :class:`Options`, ``None``,
    ``"boolean"`` or a type) of which the value must satisfy at least one, or ``"no_validation"``.
    Raises :class:`TTLabInputError` with the parameter's name, the constraint and the value."""
    for name, allowed in constraints.items():
        if isinstance(allowed, str) and allowed == "no_validation":
            continue
        value = params[name]
        if not any(_satisfied(c, value) for c in allowed):
            raise _error(name, value, list(allowed))


def check_int(value: Any, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) in [``minimum``, ``maximum``] (None: unbounded)."""
    validate_params({name: value}, {name: [Interval(numbers.Integral, minimum, maximum, closed="both")]})
    return int(value)


def check_float(
    value: Any,
    name: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """``value`` as a ``float`` if it is a finite real number (not a bool) between ``lo`` and ``hi`` (None or
    ±inf: unbounded); ``lo_open`` / ``hi_open`` exclude that end."""
    left = None if lo is None or lo == -math.inf else lo
    right = None if hi is None or hi == math.inf else hi
    closed = {(False, False): "both", (False, True): "left", (True, False): "right", (True, True): "neither"}
    validate_params({name: value}, {name: [Interval(numbers.Real, left, right, closed=closed[lo_open, hi_open])]})
    return float(value)


def check_hours(value: Any, name: str = "max_hours") -> float:
    """``value`` as a float if it is a positive, finite number of hours (a run's time limit)."""
    hours = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    if not (math.isfinite(hours) and hours > 0):
        raise TTLabInputError(f"{name} must be a positive number (got {value})", params=(name,))
    return hours


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """``value`` if it is one of ``choices``."""
    validate_params({name: value}, {name: [Options(choices)]})
    return value


POSITIVE_INT = [Interval(numbers.Integral, 1, None, closed="left")]
"""The constraint list of a count: an integer >= 1 (``[*POSITIVE_INT, None]`` when it may be None)."""
SEED = [Interval(numbers.Integral, 0, None, closed="left")]
"""The constraint list of a seed: an integer >= 0 (what NumPy's and torch's generators accept)."""


class Declared:
    """A config dataclass whose field constraints are declared, as scikit-learn's estimators declare theirs.

    Subclasses set ``parameter_constraints`` (field name -> a list of constraints, as :func:`validate_params`
    takes) and override :meth:`check` for the rules that relate fields. Both run after the dataclass's
    ``__init__`` (and after :func:`dataclasses.replace`), the declared ones first, in their declared order."""

    parameter_constraints: ClassVar[dict[str, Any]] = {}

    def __post_init__(self) -> None:
        validate_params({name: getattr(self, name) for name in self.parameter_constraints}, self.parameter_constraints)
        self.check()

    def check(self) -> None:
        """The checks that relate fields (none here); raise :class:`TTLabInputError` naming them in ``params``."""


def parse_named_values(text: str, param: str, *, example: str, key: Callable[[str], str] = str.strip,
                       what: str = "name") -> dict[str, float]:
    """``"a=1.5,b=2"`` → ``{"a": 1.5, "b": 2.0}`` for the parameter ``param`` (``example``: a valid value to quote), each
    name read through ``key`` (e.g. an estimator's canonical name); a malformed entry, a name given twice, a value that
    is not a number or an empty list is refused naming ``param``."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise TTLabInputError(f"{param} entries must look like name=value (e.g. {example}); got {part!r}.",
                                  params=(param,))
        k = key(name)
        if k in out:
            raise TTLabInputError(f"{param} names {k!r} twice; give each {what} once.", params=(param,))
        try:
            out[k] = float(value)
        except ValueError:
            raise TTLabInputError(f"{param}: {name.strip()!r} has a non-numeric value {value!r}.",
                                  params=(param,)) from None
    if not out:
        raise TTLabInputError(f"{param} is empty; give e.g. {example}.", params=(param,))
    return out
