"""Task identity: the name of a task function, the canonical JSON of a config, and the task key.

A task's key is the first :data:`KEY_LENGTH` hex digits of the sha256 of the canonical JSON of
``{"fn": <task name>, "config": <config>}``. The task name is ``module:qualname``, or the name given
with :func:`task_name`. Keys name the cache files (``<key>.json``), so this scheme must never change:
users' caches of finished work depend on it (``tests/test_sweep.py`` pins values). The integer-option check of
:func:`ttlab.sweep.run_sweep` and the backends is :func:`ttlab.validation.check_int`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from ttlab.errors import TTLabInputError

__all__ = ["KEY_LENGTH", "canonical_json", "function_name", "key_name", "task_key", "task_name"]

KEY_LENGTH = 20  # hex characters of the sha256 kept in a key (80 bits)
_TASK_NAME_ATTR = "__ttlab_task_name__"


def function_name(fn: Callable[..., Any]) -> str:
    """``module:qualname`` of a task function; raises if it cannot be pickled by reference."""
    if not callable(fn):
        raise TTLabInputError(f"a sweep task must be a function, got {type(fn).__name__}")
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname:
        raise TTLabInputError(f"sweep task {fn!r} has no module-level name; define it with `def` at module level")
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise TTLabInputError(
            f"sweep task {module}.{qualname} is a lambda or a nested function; worker processes can only "
            "import module-level functions — move it to the top level of a module"
        )
    return f"{module}:{qualname}"


def task_name(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: give a task function a fixed name for its cache keys (``"module:qualname"`` style).

    Use it when a task function is moved or renamed, with its old ``module:qualname``, so records cached
    under the old keys are still found.
    """
    if not isinstance(name, str) or ":" not in name:
        raise TTLabInputError(f"a task name looks like 'package.module:function', got {name!r}")

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, _TASK_NAME_ATTR, name)
        return fn

    return mark


def key_name(fn: Callable[..., Any]) -> str:
    """The name a task's key is computed from: its :func:`task_name`, else ``module:qualname``."""
    where = function_name(fn)  # checked even when named: workers import the function by reference
    return getattr(fn, _TASK_NAME_ATTR, where)


def canonical_json(obj: Any) -> str:
    """Canonical JSON text of a config (sorted keys, no spaces); raises for non-JSON values."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    except (TypeError, ValueError) as exc:
        raise TTLabInputError(
            f"a sweep config must be JSON-able (dicts, lists, str, int, finite float, bool, None): {exc}"
        ) from None


def task_key(fn: Callable[..., Any] | str, config: dict[str, Any]) -> str:
    """Stable key of a task: sha256 of (function name, canonical config JSON), first 20 hex digits."""
    if not isinstance(config, dict):
        raise TTLabInputError(f"a sweep config must be a dict, got {type(config).__name__}")
    name = fn if isinstance(fn, str) else key_name(fn)
    text = canonical_json({"fn": name, "config": config})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]

