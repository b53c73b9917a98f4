"""ttlab.validation: every check, every failure path, one wording (bools are not ints, NaN/inf are not numbers)."""

from __future__ import annotations

import math
import re
from numbers import Integral, Real

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.validation import Interval, Options, check_choice, check_float, check_int, validate_params


# ------------------------------------------------------------------------------------------ check_int
@pytest.mark.parametrize("value", [0, 5, 10**30, np.int64(7), np.int8(-3), np.uint16(4)])
def test_check_int_accepts_integers_and_returns_python_ints(value):
    out = check_int(value, "n")
    assert out == int(value) and type(out) is int


@pytest.mark.parametrize(
    "value, shown",
    [(True, "True"), (False, "False"), (np.bool_(True), "np.True_"), (2.0, "2.0"), (2.5, "2.5"), ("3", "'3'"),
     (None, "None"), (float("nan"), "nan"), (np.float64(3.0), "3.0"), ([1], "[1]")],
)
def test_check_int_rejects_non_integers(value, shown):
    with pytest.raises(TTLabInputError) as info:
        check_int(value, "n", 1)
    assert str(info.value) == f"n must be an integer >= 1, got {shown}."


def test_check_int_bounds():
    assert check_int(2, "k", 2) == 2 and check_int(9, "k", 2, 9) == 9 and check_int(-5, "k", maximum=0) == -5
    for value, lo, hi, want in [
        (1, 2, None, "k must be an integer >= 2, got 1."),
        (10, 2, 9, "k must be an integer in [2, 9], got 10."),
        (1, 2, 9, "k must be an integer in [2, 9], got 1."),
        (1, None, 0, "k must be an integer <= 0, got 1."),
        (np.int64(-4), 0, None, "k must be an integer >= 0, got -4."),
        ("x", None, None, "k must be an integer, got 'x'."),
    ]:
        with pytest.raises(TTLabInputError) as info:
            check_int(value, "k", lo, hi)
        assert str(info.value) == want


# ---------------------------------------------------------------------------------------- check_float
@pytest.mark.parametrize("value", [0.5, 1, np.float32(0.25), np.int64(1), -3.0])
def test_check_float_accepts_finite_numbers_and_returns_floats(value):
    out = check_float(value, "x")
    assert out == float(value) and type(out) is float


@pytest.mark.parametrize("value", [True, False, np.bool_(False), "0.5", None, float("nan"), float("inf"),
                                   -math.inf, np.float64("nan"), complex(1, 0), [0.5]])
def test_check_float_rejects_bools_strings_nan_and_inf(value):
    with pytest.raises(TTLabInputError, match=r"^x must be a finite number, got "):
        check_float(value, "x")
    with pytest.raises(TTLabInputError, match=r"^x must be a number >= 0, got "):
        check_float(value, "x", 0)  # an unbounded end does not let inf through either


@pytest.mark.parametrize(
    "lo, hi, lo_open, hi_open, inside, outside, text",
    [
        (0, 1, True, True, [0.5, 1e-300], [0, 1, -1, 2], "a number in (0, 1)"),
        (0, 1, False, False, [0, 1, 0.5], [-1e-9, 1.000001], "a number in [0, 1]"),
        (0, 1, True, False, [1, 0.5], [0, 1.5], "a number in (0, 1]"),
        (0, 1, False, True, [0, 0.5], [1, -0.5], "a number in [0, 1)"),
        (0, None, True, False, [1e-12, 1e300], [0, -1], "a number > 0"),
        (0, math.inf, False, True, [0, 5], [-1e-12], "a number >= 0"),
        (None, 2.5, False, True, [-1e300, 2.4], [2.5, 3], "a number < 2.5"),
        (-math.inf, 2.5, False, False, [2.5], [2.6], "a number <= 2.5"),
    ],
)
def test_check_float_bounds(lo, hi, lo_open, hi_open, inside, outside, text):
    for v in inside:
        assert check_float(v, "x", lo, hi, lo_open, hi_open) == v
    for v in outside:
        with pytest.raises(TTLabInputError) as info:
            check_float(v, "x", lo, hi, lo_open, hi_open)
        assert str(info.value) == f"x must be {text}, got {v!r}."


# --------------------------------------------------------------------------------------- check_choice
def test_check_choice():
    assert check_choice("mean", "average", ("mean", "median")) == "mean"
    assert check_choice(2, "order", [1, 2]) == 2
    for bad in ("Mean", None, 3, np.array(["mean", "median"])):
        with pytest.raises(TTLabInputError, match=r"^unknown average .*; choose one of mean, median\.$"):
            check_choice(bad, "average", ("mean", "median"))
    with pytest.raises(TTLabInputError) as info:
        check_choice("geometric", "average", ["mean", "harmonic", "median"])
    assert str(info.value) == "unknown average 'geometric'; choose one of mean, harmonic, median."


# ------------------------------------------------------------------------------- Interval and Options
def test_interval_membership_and_text():
    i = Interval(Integral, 1, None, closed="left")
    assert i.is_satisfied_by(1) and i.is_satisfied_by(np.int32(5)) and not i.is_satisfied_by(0)
    assert not i.is_satisfied_by(True) and not i.is_satisfied_by(1.0) and not i.is_satisfied_by("1")
    assert str(i) == "an integer >= 1" and repr(i) == "Interval(Integral, 1, None, closed='left')"
    assert str(Interval(Integral, None, None)) == "an integer"
    assert str(Interval(Integral, 0, 3, closed="neither")) == "an integer in (0, 3)"
    assert str(Interval(Real, None, None, closed="neither")) == "a finite number"
    r = Interval(Real, 0, 1, closed="right")
    assert r.is_satisfied_by(1) and r.is_satisfied_by(np.float16(0.5)) and not r.is_satisfied_by(0)
    assert not r.is_satisfied_by(float("nan")) and not r.is_satisfied_by(np.bool_(True))
    assert not Interval(Real, None, None).is_satisfied_by(math.inf)


@pytest.mark.parametrize(
    "args, kwargs, error",
    [((int, 0, 1), {}, TypeError), ((Integral, 0, 1), {"closed": "open"}, ValueError),
     ((Real, 2, 1), {}, ValueError)],
)
def test_interval_rejects_bad_definitions(args, kwargs, error):
    with pytest.raises(error):
        Interval(*args, **kwargs)


def test_options():
    o = Options(["a", "b", "a"])
    assert o.options == ("a", "b") and str(o) == "one of a, b" and repr(o) == "Options(('a', 'b'))"
    assert o.is_satisfied_by("b") and not o.is_satisfied_by("c") and not o.is_satisfied_by(np.array([1, 2]))


# ------------------------------------------------------------------------------------ validate_params
CONSTRAINTS = {
    "k": [Interval(Integral, 2, None, closed="left")],
    "average": [Options(("mean", "median"))],
    "batch_size": [Interval(Integral, 2, None, closed="left"), None],
    "dnoise": [None, Options(("gauss",))],
    "flag": ["boolean"],
    "data": [dict],
    "anything": "no_validation",
}
GOOD = {"k": 20, "average": "mean", "batch_size": None, "dnoise": None, "flag": False, "data": {}, "anything": object()}


def test_validate_params_accepts_valid_values():
    validate_params(GOOD, CONSTRAINTS)
    validate_params({**GOOD, "batch_size": 4096, "dnoise": "gauss", "flag": np.bool_(True)}, CONSTRAINTS)
    validate_params({"k": 3, "unchecked": "whatever"}, {"k": CONSTRAINTS["k"]})  # extra params are not checked


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("k", 1, "k must be an integer >= 2, got 1."),
        ("k", True, "k must be an integer >= 2, got True."),
        ("average", "mode", "unknown average 'mode'; choose one of mean, median."),
        ("batch_size", 1, "batch_size must be an integer >= 2 or None, got 1."),
        ("batch_size", 2.0, "batch_size must be an integer >= 2 or None, got 2.0."),
        ("dnoise", "laplace", "unknown dnoise 'laplace'; choose one of gauss, or None."),
        ("flag", 1, "flag must be a boolean, got 1."),
        ("data", [], "data must be an instance of dict, got []."),
    ],
)
def test_validate_params_names_the_parameter_the_constraint_and_the_value(name, value, message):
    with pytest.raises(TTLabInputError, match=f"^{re.escape(message)}$"):
        validate_params({**GOOD, name: value}, CONSTRAINTS)


def test_validate_params_checks_in_the_constraints_order():
    with pytest.raises(TTLabInputError, match="^k must"):
        validate_params({**GOOD, "k": 0, "average": "x"}, CONSTRAINTS)


def test_a_missing_parameter_is_a_programming_error():
    with pytest.raises(KeyError):
        validate_params({}, {"k": CONSTRAINTS["k"]})


def test_errors_are_value_errors():
    """TTLabInputError derives from ValueError, as scikit-learn's InvalidParameterError does."""
    with pytest.raises(ValueError):
        check_int(-1, "n", 0)


def test_declared_configs_check_fields_first_then_the_cross_field_rules():
    from dataclasses import dataclass, replace

    from ttlab.validation import POSITIVE_INT, Declared

    @dataclass(frozen=True)
    class Cfg(Declared):
        lo: int = 1
        hi: int = 2
        mode: str | None = None
        parameter_constraints = {"lo": POSITIVE_INT, "hi": POSITIVE_INT, "mode": [Options(("a", "b")), None]}

        def check(self) -> None:
            if self.lo > self.hi:
                raise TTLabInputError(f"lo must be <= hi = {self.hi}, got {self.lo}.", params=("lo", "hi"))

    assert Cfg(3, 4, "a") == Cfg(lo=3, hi=4, mode="a")
    with pytest.raises(TTLabInputError, match=r"^lo must be an integer >= 1, got 0\.$") as info:
        Cfg(0, -1)  # both fields bad: the declared check of the first field speaks, before any cross-field rule
    assert info.value.params == ("lo",)
    with pytest.raises(TTLabInputError, match="^unknown mode 'c'; choose one of a, b, or None.$"):
        Cfg(mode="c")
    with pytest.raises(TTLabInputError, match="lo must be <= hi") as info:
        replace(Cfg(), lo=5)  # replace() re-runs both
    assert info.value.params == ("lo", "hi")
    with pytest.raises(TTLabInputError, match="hi must be an integer >= 1, got True"):
        Cfg(hi=True)


def test_check_hours_is_the_one_check_of_a_time_limit():
    from ttlab.validation import check_hours

    assert check_hours(2) == 2.0 and check_hours(0.5, "budget") == 0.5
    for bad in (0, -1, float("nan"), float("inf"), True, "1"):
        with pytest.raises(TTLabInputError, match=r"^max_hours must be a positive number \(got ") as info:
            check_hours(bad)
        assert info.value.params == ("max_hours",)
