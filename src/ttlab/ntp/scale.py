"""Theorem 3 (generalization) at large vocabularies, from the structured parameters (no |V| × |V| array).

Nothing here prints.

:func:`ttlab.ntp.generalize.evaluate_generalization` needs the dense W_ov and W_kq and
:func:`ttlab.ntp.generalize.unseen_sentences` lists every query's categories over the whole vocabulary
(O(|V|) per sample). Here both work on what a structured run keeps:

* the categories of a query come from its order's above/below sets (O(edges of the query)); a
  non-comparable token is drawn by rejection from the tokens with a collocation;
* the model's prediction for a sentence X with query q is exact: the scores are W_kq[x_l, q] (0 off
  the stored pairs), φ = softmax, and the logit of class c is a constant plus
  Σ_{l: n(x_l) = c} φ_l (ℓ − o)_{x_l}; the classes absent from the sentence share the constant, so the
  argmax (first index among ties, as ``torch.argmax``) is the best present class, or the smallest
  absent class when no present class beats the constant.

The theory's rule is :func:`ttlab.ntp.generalize.theory_prediction` itself, asked about categories that
answer membership from those sets. The max-margin limit and the controls on W*_kq's support
(:func:`max_margin_limit_state`, :func:`scale_controls`) are those of the dense comparison.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.fastcheck import QuickCheck
from ttlab.ntp.generalize import TheoryPrediction, agreement_summary, max_margin_limit_norm, theory_prediction
from ttlab.ntp.structure import DatasetStructure, TokenCategories
from ttlab.ntp.structured import SparseKQ, StructuredState

__all__ = ["ScaleGeneralization", "max_margin_limit_state", "scale_controls", "structured_predict", "with_kq_values"]


class _Where:
    """A container whose ``in`` is a predicate (a category given by a membership test)."""

    def __init__(self, test) -> None:
        self.test = test

    def __contains__(self, token: object) -> bool:
        return bool(self.test(token))


class ScaleGeneralization:
    """Unseen sentences and Theorem 3's predictions for a dataset, without |V|-sized work per sentence."""

    def __init__(self, structure: DatasetStructure) -> None:
        self.ds = structure.dataset
        self.colloc = structure.collocation
        self._orders = structure.orders
        self._sets: dict[str, tuple[set[str], set[str]]] = {}
        self.known = [t for t in self.ds.vocab if t in self.colloc]
        self.queries = [q for q in self.ds.vocab if q in self.colloc and q in structure.orders
                        and structure.orders[q].edges]  # vocabulary order, as from_quick_check

    @classmethod
    def from_quick_check(cls, qc: QuickCheck, dataset: NTPDataset) -> ScaleGeneralization:
        """The same, from :func:`ttlab.ntp.fastcheck.quick_check` of ``dataset``'s text (a valid one):
        no sentence-by-sentence analysis (minutes at |V| = 50,257)."""
        if not qc.valid or qc.vocab != dataset.vocab:
            raise TTLabInputError("from_quick_check needs the quick check of this dataset's text, and a valid one")
        self = cls.__new__(cls)
        self.ds = dataset
        v = qc.vocab
        self.colloc = {v[x]: v[y] for x, y in enumerate(qc.collocation.tolist()) if y >= 0}
        self._orders = None
        self._sets = {}
        q, t, a, b = qc.role_query, qc.role_token, qc.role_above, qc.role_below
        starts = np.r_[0, np.flatnonzero(np.diff(q)) + 1, q.size]
        for i in range(starts.size - 1):
            sl = slice(starts[i], starts[i + 1])
            if a[sl].any():  # the query has an order
                self._sets[v[int(q[starts[i]])]] = ({v[x] for x in t[sl][a[sl]]}, {v[x] for x in t[sl][b[sl]]})
        self.known = [x for x in v if x in self.colloc]
        self.queries = [x for x in v if x in self._sets and x in self.colloc]
        return self

    def _above_below(self, q: str) -> tuple[set[str], set[str]]:
        if q not in self._sets:
            order = self._orders.get(q) if self._orders is not None else None
            self._sets[q] = (order.above(), order.below()) if order is not None else (set(), set())
        return self._sets[q]

    def theory(self, tokens: tuple[str, ...]) -> TheoryPrediction:
        """:func:`ttlab.ntp.generalize.theory_prediction` itself, its categories answered from the query's
        above/below sets (membership tests only, no list over the vocabulary)."""
        return theory_prediction(self, tokens)

    def categories(self, query: str) -> TokenCategories:
        """The categories of ``query`` as membership tests (what :func:`theory_prediction` asks of them)."""
        above, below = self._above_below(query)
        return TokenCategories(optimal=_Where(lambda t: t in above and t not in below),  # type: ignore[arg-type]
                               non_optimal=_Where(lambda t: t in below and t not in above),  # type: ignore[arg-type]
                               non_comparable=_Where(lambda t: t not in above and t not in below),  # type: ignore[arg-type]
                               confused=_Where(lambda t: t in above and t in below))  # type: ignore[arg-type]

    @property
    def collocation(self) -> dict[str, str]:
        return self.colloc

    def sample(self, n_samples: int, seed: int = 0, max_len: int | None = None) -> list[tuple[str, ...]]:
        """``n_samples`` unseen sentences (length 2 … max_len, default min(L_max, 64)), half with an optimal
        token, half with a non-comparable token among non-optimal ones (Theorem 3's two cases)."""
        from ttlab.ntp.generalize import MAX_UNSEEN_LEN

        max_len = min(self.ds.max_len, MAX_UNSEEN_LEN) if max_len is None else max_len
        if max_len < 2:
            raise TTLabInputError(f"unseen sentences need max length ≥ 2 (got {max_len})")
        queries = self.queries
        if not queries:
            raise TTLabInputError("the dataset has no multi-token sentences, so no query has an order to generalize")
        rng = np.random.default_rng(seed)
        seen = {s.tokens for s in self.ds.sentences}
        want = {"optimal": n_samples // 2, "non-comparable": n_samples - n_samples // 2}
        got: dict[str, list[tuple[str, ...]]] = {k: [] for k in want}
        chosen: set[tuple[str, ...]] = set()
        known = self.known
        for _ in range(50 * max(n_samples, 1)):
            if all(len(got[k]) >= want[k] for k in want):
                break
            q = queries[rng.integers(len(queries))]
            above, below = self._above_below(q)
            optimal = sorted(above - below)
            non_optimal = sorted(below - above)
            n_free = len(known) - len(above | below)

            def free_token() -> str | None:
                for _ in range(64):
                    t = known[rng.integers(len(known))]
                    if t not in above and t not in below:
                        return t
                return None

            target = "optimal" if len(got["optimal"]) < want["optimal"] and rng.random() < 0.5 else "non-comparable"
            if len(got[target]) >= want[target]:
                target = "optimal" if target == "non-comparable" else "non-comparable"
            lead = (optimal[rng.integers(len(optimal))] if optimal else None) if target == "optimal" else (
                free_token() if n_free > 0 else None)
            if lead is None:
                continue
            L = int(rng.integers(2, max_len + 1))
            body = [lead]
            for _ in range(L - 2):
                n_pool = len(non_optimal) + (n_free if target == "optimal" else 0)
                if n_pool == 0:
                    body.append(lead)
                elif rng.integers(n_pool) < len(non_optimal):
                    body.append(non_optimal[rng.integers(len(non_optimal))])
                else:
                    body.append(free_token() or lead)
            rng.shuffle(body)
            sent = tuple(body) + (q,)
            if sent in seen or sent in chosen or self.theory(sent).case != target:
                continue
            chosen.add(sent)
            got[target].append(sent)
        return got["optimal"] + got["non-comparable"]

    def evaluate(self, state: StructuredState, sentences: list[tuple[str, ...]]) -> dict:
        """Model (structured parameters) against the theory on ``sentences``: per-case agreement, as
        :func:`ttlab.ntp.generalize.evaluate_generalization` reports it, with the first cases listed."""
        idx = self.ds.index
        preds = structured_predict(state, [[idx[t] for t in s] for s in sentences])
        cases = []
        for s, p in zip(sentences, preds):
            th = self.theory(s)
            model = self.ds.vocab[p]
            cases.append({"sentence": " ".join(s), "case": th.case, "theory_prediction": th.prediction,
                          "model_prediction": model, "agree": None if th.prediction is None else model == th.prediction})
        return agreement_summary(cases)


def structured_predict(state: StructuredState, sentences: list[list[int]]) -> list[int]:
    """argmax_c of the model's logits for each sentence (token indices), from the structured W_ov and W_kq."""
    ov, kq = state.W_ov, state.W_kq
    V = ov.vocab_size
    pos = np.full(V, -1, dtype=np.int64)
    pos[ov.tokens.numpy()] = np.arange(len(ov.tokens))
    cls = ov.classes.numpy()
    gap = (ov.label_val - ov.other_val).numpy()
    keys = kq.query.numpy().astype(np.int64) * V + kq.token.numpy()
    order = np.argsort(keys, kind="stable")
    keys, vals = keys[order], kq.values.numpy()[order]
    out = []
    for toks in sentences:
        x = np.asarray(toks, dtype=np.int64)
        k = x[-1] * V + x
        at = np.minimum(np.searchsorted(keys, k), max(keys.size - 1, 0))
        s = np.where((keys.size > 0) & (keys[at] == k), vals[at] if keys.size else 0.0, 0.0)
        phi = np.exp(s - s.max())
        phi /= phi.sum()
        p = pos[x]
        has = p >= 0
        bonus: dict[int, float] = {}
        for c, b in zip(cls[p[has]].tolist(), (phi[has] * gap[p[has]]).tolist()):
            bonus[c] = bonus.get(c, 0.0) + b
        absent = 0
        while absent in bonus:
            absent += 1
        best_c, best_b = (absent, 0.0) if absent < V else (-1, -np.inf)
        for c, b in bonus.items():
            if b > best_b or (b == best_b and c < best_c):
                best_c, best_b = c, b
        out.append(int(best_c))
    return out


def with_kq_values(state: StructuredState, values: np.ndarray | torch.Tensor) -> StructuredState:
    """``state`` with W_kq's values on W*_kq's sparsity pattern replaced by ``values``."""
    star = state.wkq_star
    kq = SparseKQ(star.vocab_size, token=torch.as_tensor(star.rows), query=torch.as_tensor(star.cols),
                  values=torch.as_tensor(values, dtype=torch.float64))
    return replace(state, W_kq=kq)


def max_margin_limit_state(state: StructuredState) -> tuple[StructuredState, float]:
    """``state`` with W_kq replaced by W*_kq scaled to :func:`~ttlab.ntp.generalize.max_margin_limit_norm`
    (and that norm): the max-margin limit Theorem 3 speaks about, built as
    :func:`~ttlab.ntp.generalize.generalization_study` builds it densely."""
    star = state.wkq_star
    norm = max_margin_limit_norm(star.values, star.norm, state.W_kq.norm())
    return with_kq_values(state, torch.as_tensor(star.values, dtype=torch.float64) * (norm / star.norm)), norm


def scale_controls(gen: ScaleGeneralization, state: StructuredState, sents: list[tuple[str, ...]], norm: float,
                   seed: int) -> dict:
    """Theorem 3's controls on the structured path: uniform attention (W_kq = 0) and random values of norm
    ``norm`` (fixed seed) on W*_kq's sparsity pattern, each as ``by_case`` agreements on ``sents``."""
    n = len(state.wkq_star.values)
    R = torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return {"uniform attention": gen.evaluate(with_kq_values(state, torch.zeros(n, dtype=torch.float64)), sents)["by_case"],
            "random attention": gen.evaluate(with_kq_values(state, R * (norm / float(R.norm()))), sents)["by_case"]}
