"""What the paper B parts of ``ttlab reproduce`` without a language model share (``table1``,
``manifold_regression``): the relative tolerances of an exponent claim.
"""

from __future__ import annotations

EXPONENT_TOLERANCE = {"holds_rel": 0.10, "partly_rel": 0.35}
"""Relative tolerances of every exponent claim: holds within 10 % of the prediction, partly within 35 %."""
