"""The limits paper A's modules read, at the bottom of :mod:`ttlab.ntp` (no other ntp module below it).

* memory: :data:`DEFAULT_MEMORY_LIMIT_GIB` and :func:`check_limit` (the validation of ``memory_limit_gib``),
  :data:`GIB` and :func:`gib_text` for the messages that state a size;
* steps and time: :data:`MAX_STEPS` per stage, :data:`DEFAULT_MAX_HOURS` of an estimated run;
* the structured path's dense copies: :data:`MATERIALIZE_LIMIT`; the texts `ntp check` scans first:
  :data:`FAST_CHECK_CHARS`.

What reading a dataset costs is in :mod:`ttlab.ntp.reading`; the estimates that are compared with these
limits are in :mod:`ttlab.ntp.cost`. Cheap to import (the CLI reads its defaults here).
"""

from __future__ import annotations

import math

from ttlab.errors import TTLabInputError

#: the budget of paper A at GPT-2 vocabulary size (|V| = 50,257, 200,000 sentences: ≤ 4 GiB peak)
DEFAULT_MEMORY_LIMIT_GIB = 4.0
#: steps per stage above which a run is refused whatever the budget (1e8 rows of metrics alone ≈ 60 GB)
MAX_STEPS = 100_000_000
#: runs estimated to take longer than this many hours are refused unless the limit is raised
DEFAULT_MAX_HOURS = 24.0
#: the structured result also carries dense W_ov, W_kq and W* matrices when |V| is at most this (for the
#: consumers that need matrices: generalization, plots of other tools); above it they are left out
MATERIALIZE_LIMIT = 2048
#: bytes in a GiB
GIB = 2**30
#: `ntp check` runs the vectorized checker first on texts longer than this many characters
FAST_CHECK_CHARS = 2_000_000


def gib_text(n_bytes: float) -> str:
    """A size in GiB for messages: two decimals below 10 GiB, whole GiB above."""
    g = n_bytes / GIB
    return f"{g:.2f} GiB" if g < 10 else f"{g:,.0f} GiB"


def check_limit(memory_limit_gib: float) -> float:
    """Validate a memory limit in GiB."""
    if not (isinstance(memory_limit_gib, (int, float)) and math.isfinite(memory_limit_gib) and memory_limit_gib > 0):
        raise TTLabInputError(f"memory_limit_gib must be a positive number of GiB (got {memory_limit_gib})",
                              params=("memory_limit_gib",))
    return float(memory_limit_gib)
