"""ttlab — the transformer theory lab.

Runnable, tested implementations of two theories of transformers:

* ``ttlab.ntp`` — next-token-prediction training dynamics of a one-layer transformer
  and their max-margin limits (Huang, Liang, Yang 2024).
* intrinsic dimension and scaling laws (Havrilla, Liao 2024), in the subpackages
  ``ttlab.intrinsic_dim`` and ``ttlab.scaling``.
"""

__version__ = "0.1.0"
