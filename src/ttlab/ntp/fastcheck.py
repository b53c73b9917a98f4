"""Vectorized check of Assumptions 1 and 3 for large dataset files (what `ttlab ntp check` runs first).

Nothing here prints. The array passes are :func:`ttlab.ntp.reading.scan_text` (the reading limit uses them
too); :class:`QuickCheck` is what they found, with the views `ttlab ntp check` reports.

:func:`ttlab.ntp.structure.analyze` walks sentences in Python and keeps every order edge with its
source lines, which is what its violation messages need, but at |V| = 50,257 with 200,000 sentences it
takes minutes. Here the file is parsed once into integer arrays (token ids in order of first
appearance, as :class:`ttlab.ntp.dataset.NTPDataset` numbers them) and every assumption is one
array pass:

* collocation: the labels of the one-token sentences; a token with two labels, or a token of a
  longer sentence without one, breaks Assumption 1;
* a sentence with query q and label y is realizable when some token in it has n(x) = y;
* under q, a token is *above* when it is optimal in a sentence that also holds a non-optimal token,
  *below* when it is non-optimal in a (realizable) sentence; confused = above and below. A cycle of
  the order makes all its members confused, so no confused token ⇒ every order is acyclic;
* Assumption 3: per sentence the optimal occurrences ≥ the count of each non-optimal token.

The verdict equals ``analyze(...).valid`` (tested on valid and invalid files). When a file breaks an
assumption, the caller re-runs :func:`~ttlab.ntp.structure.analyze` for the messages, line numbers
and the full list. Sequence lines expand into their prefixes (L(L−1)/2 slots per line); above
:data:`MAX_SLOTS` expanded slots :func:`quick_check` returns None and the incremental checker is used.

:func:`check_dataset_file` is `ttlab ntp check`: this check first on a large text, else the full one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ttlab.ntp.cost import TrainingCost, batch_cost, quick_check_slots, training_cost
from ttlab.ntp.dataset import NTPDataset, read_dataset_text
from ttlab.ntp.limits import DEFAULT_MEMORY_LIMIT_GIB, FAST_CHECK_CHARS
from ttlab.ntp.reading import MAX_SLOTS, TextScan, scan_text
from ttlab.ntp.structure import DatasetStructure, analyze

__all__ = ["FullCheck", "QuickCheck", "check_dataset_file", "quick_check"]


@dataclass
class QuickCheck(TextScan):
    """What the vectorized check found (the fields of :class:`ttlab.ntp.reading.TextScan` and the text's
    ``source``), with the views `ntp check` reports for a valid file."""

    source: str = "<text>"

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def n_orders(self) -> int:
        """Queries whose order has at least one pair."""
        return int(np.unique(self.role_query[self.role_above]).size)

    def degenerate(self) -> dict[str, str]:
        """As :meth:`ttlab.ntp.structure.DatasetStructure.degenerate` (its wording)."""
        out: dict[str, str] = {}
        if self.vocab_size < 2:
            out["stage1"] = (f"the vocabulary has a single token ({self.vocab[0]!r}): there is no other token to "
                             "predict, so the collocation loss is 0 and W*_ov has no constraint")
        if not self.role_above.any():
            out["stage2"] = ("no multi-token sentence holds both an optimal token (n(x) = its next token) and a "
                             "non-optimal one, so no query orders two tokens; W*_kq has no constraint and the "
                             "stage-2 direction is undefined")
        return out

    def orders(self) -> dict[str, dict]:
        """Per query with an order: its optimal, non-optimal and confused tokens and how many are
        non-comparable (counted, not listed: at large |V| every query has ~|V| of them)."""
        out: dict[str, dict] = {}
        if self.role_query.size == 0:
            return out
        has_order = np.isin(self.role_query, np.unique(self.role_query[self.role_above]))
        q, t = self.role_query[has_order], self.role_token[has_order]
        a, b = self.role_above[has_order], self.role_below[has_order]
        starts = np.r_[0, np.flatnonzero(np.diff(q)) + 1, q.size]
        V = self.vocab_size
        for i in range(starts.size - 1):
            sl = slice(starts[i], starts[i + 1])
            tt, aa, bb = t[sl], a[sl], b[sl]
            cat = {"optimal": tt[aa & ~bb], "non_optimal": tt[bb & ~aa], "confused": tt[aa & bb]}
            entry = {k: [self.vocab[x] for x in np.sort(v)] for k, v in cat.items()}
            entry["n_non_comparable"] = V - int(((aa | bb)).sum())
            out[self.vocab[int(q[starts[i]])]] = entry
        return out

    def collocation_pairs(self) -> list[tuple[str, str]]:
        """(x, n(x)) for every token with a collocation, in vocabulary order."""
        return [(self.vocab[x], self.vocab[y]) for x, y in enumerate(self.collocation.tolist()) if y >= 0]

    def report(self) -> dict:
        """The JSON of `ntp check --json` for a valid file (:meth:`DatasetStructure.report`'s keys, the
        non-comparable tokens counted) with the training cost."""
        return {"valid": self.valid, "source": self.source, "n_sentences": self.n_sentences,
                "n_occurrences": self.n_occurrences, "vocab": self.vocab, "collocation": dict(self.collocation_pairs()),
                "orders": self.orders(), "violations": [], "n_violations": 0, "violations_by_kind": {}, "degenerate": self.degenerate(),
                "training_cost": self.training_cost().as_dict()}

    def training_cost(self) -> TrainingCost:
        """:func:`ttlab.ntp.cost.training_cost` of the dataset (dim None, 0 steps), from the arrays."""
        return batch_cost(self.n_sentences, self.width, self.vocab_size, line=self.widest_line,
                          line_sentences=self.widest_line_sentences, line_tokens=self.widest_tokens)


def quick_check(text: str, source: str = "<text>", max_slots: int = MAX_SLOTS) -> QuickCheck | None:
    """Check the assumptions of a dataset text with array operations (:func:`ttlab.ntp.reading.scan_text`);
    None when the fast path does not apply (a format error, for the strict parser to report, or more than
    ``max_slots`` sentence slots)."""
    scan = scan_text(text, max_slots)
    return None if scan is None else QuickCheck(source=source, **vars(scan))


class FullCheck(NamedTuple):
    """What the sentence-by-sentence checker found: the structure, its report (with ``training_cost``) and
    the cost of training on the dataset."""

    structure: DatasetStructure
    report: dict
    cost: TrainingCost


def check_dataset_file(path: str | Path, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB,
                       fast_check_chars: int = FAST_CHECK_CHARS) -> QuickCheck | FullCheck:
    """`ntp check`: Assumptions 1 and 3 of the dataset file ``path`` and what training on it would cost.

    A text longer than ``fast_check_chars`` is first checked by the array scan (within the memory limit);
    when that finds it valid its :class:`QuickCheck` is the answer. Otherwise the dataset is read and
    analyzed sentence by sentence, which lists every violation with its lines (:class:`FullCheck`).
    """
    text = read_dataset_text(path, memory_limit_gib)
    if len(text) > fast_check_chars:
        qc = quick_check(text, str(path), max_slots=quick_check_slots(memory_limit_gib))
        if qc is not None and qc.valid:
            return qc
    structure = analyze(NTPDataset.from_text(text, source=str(path), memory_limit_gib=memory_limit_gib))
    report = structure.report()
    cost = training_cost(structure.dataset)
    report["training_cost"] = cost.as_dict()
    return FullCheck(structure, report, cost)
