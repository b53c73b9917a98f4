"""The scikit-learn estimator contract, written once, without importing scikit-learn.

ttlab's core does not depend on scikit-learn (it is in the ``dev`` extra only), so the ID
estimators do not inherit ``sklearn.base.BaseEstimator``; :class:`ParamsMixin` implements the part
of its contract that tools rely on: ``get_params(deep=True)``, ``set_params`` (with nested
``step__param`` keys), a ``__repr__`` showing the parameters that differ from their defaults, and
``__sklearn_tags__`` (imported lazily: only scikit-learn calls it). ``sklearn.base.clone``,
``check_estimator``, ``GridSearchCV``-style tools and ``Pipeline`` then work on every estimator
(tested in tests/intrinsic_dim/test_sklearn_contract.py).
"""

from __future__ import annotations

import inspect
from typing import Any

from ttlab.errors import TTLabInputError


class ParamsMixin:
    """``get_params`` / ``set_params`` / ``__repr__`` / ``__sklearn_tags__`` from the ``__init__`` signature.

    As in scikit-learn, every ``__init__`` parameter must be stored unchanged under its own name,
    and ``__init__`` must not take ``*args`` or ``**kwargs``."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """Names of the constructor's parameters, sorted (scikit-learn's order)."""
        params = inspect.signature(cls.__init__).parameters
        for p in params.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs.")
        return sorted(p for p in params if p != "self")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters; with ``deep=True`` also ``name__sub`` for parameters that are estimators."""
        out: dict[str, Any] = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params(deep=True).items())
            out[name] = value
        return out

    def set_params(self, **params: Any) -> "ParamsMixin":
        """Set constructor parameters (``name=value`` or nested ``name__sub=value``); returns ``self``."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in valid:
                raise TTLabInputError(
                    f"invalid parameter {name!r} for estimator {type(self).__name__}; "
                    f"valid parameters: {', '.join(self._get_param_names())}."
                )
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        """``Name(param=value, ...)`` with the parameters that differ from their defaults (scikit-learn's style)."""
        sig = inspect.signature(type(self).__init__).parameters
        shown = []
        for name in self._get_param_names():
            value = getattr(self, name, None)
            default = sig[name].default
            try:
                same = default is not inspect.Parameter.empty and bool(value == default) and type(value) is type(default)
            except (ValueError, TypeError):  # arrays and the like
                same = False
            if not same:
                shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags: an unsupervised estimator on 2-D float arrays, no ``y``, no NaN."""
        from sklearn.utils import InputTags, Tags, TargetTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=None,
            input_tags=InputTags(two_d_array=True, allow_nan=False),
            requires_fit=True,
            non_deterministic=False,
        )


__all__ = ["ParamsMixin"]
