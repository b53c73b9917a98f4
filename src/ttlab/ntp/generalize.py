"""Generalization to unseen sentences (Theorem 3 / Proposition 2 of paper A).

W*_kq gives 0 to the tokens that are non-comparable under a query, a positive value to optimal and a
negative value to non-optimal tokens, so the trained model places non-comparable tokens between them.
For an unseen sentence with query q the theory therefore predicts:

* it holds optimal tokens (under q) that all continue with the same token → n(optimal);
* it holds no optimal token, and non-comparable tokens that all continue with the same token →
  n(non-comparable) (the rest being non-optimal);
* otherwise (only non-optimal tokens, conflicting continuations, confused or unknown tokens) → no
  prediction.

Imports: numpy, torch, ttlab.errors, ttlab.ntp (model, structure); never ttlab.cli.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

from ttlab.errors import TTLabInputError
from ttlab.ntp.model import NTPTransformer
from ttlab.ntp.structure import DatasetStructure

CASES = ("optimal", "non-comparable", "none")
#: unseen sentences are at most this long (a dataset with one long sequence line has L_max in the thousands)
MAX_UNSEEN_LEN = 64
#: in the max-margin limit state every nonzero score is at least this large in magnitude, so a token below
#: the top score of its sentence gets attention ≤ e^(−40) relative to it (the limit, to float64)
LIMIT_SCORE_GAP = 40.0


def max_margin_limit_norm(star_values: np.ndarray, star_norm: float, trained_norm: float) -> float:
    """The norm at which W*_kq (entries ``star_values``, norm ``star_norm``) stands in for the max-margin
    limit of Theorem 3: 10 × the trained ‖W_kq‖, raised where needed so that every nonzero entry of the
    scaled W*_kq, and so every gap between a token's score and the 0 of a non-comparable token, is at least
    :data:`LIMIT_SCORE_GAP` (the margin constraints give ordered pairs gaps ≥ 1 before scaling).

    10 × the trained norm alone is not the limit: with small entries, several non-optimal copies in one
    sentence can outweigh its one non-comparable token."""
    values = np.abs(np.asarray(star_values, dtype=np.float64).ravel())
    nonzero = values[values != 0]
    if not (np.isfinite(star_norm) and star_norm > 0) or nonzero.size == 0:
        raise TTLabInputError("W*_kq is zero: there is no max-margin direction to scale (no stage-2 constraints)")
    smallest = min(1.0, float(nonzero.min()))
    return max(10 * float(trained_norm), LIMIT_SCORE_GAP * float(star_norm) / smallest)


@dataclass(frozen=True)
class TheoryPrediction:
    """What Theorem 3 says about one sentence."""

    case: str  # "optimal" | "non-comparable" | "none"
    prediction: str | None
    reason: str


def theory_prediction(structure: DatasetStructure, tokens: tuple[str, ...]) -> TheoryPrediction:
    """Classify ``tokens`` by the categories of its query and return the predicted next token."""
    if not tokens:
        raise TTLabInputError("cannot classify an empty sentence")
    q = tokens[-1]
    unknown = [t for t in tokens if t not in structure.collocation]
    if unknown:
        return TheoryPrediction("none", None, f"token(s) without collocation: {', '.join(sorted(set(unknown)))}")
    cats = structure.categories(q)
    present = list(dict.fromkeys(tokens))
    if any(t in cats.confused for t in present):
        return TheoryPrediction("none", None, f"holds a token confused under query {q!r}")
    optimal = [t for t in present if t in cats.optimal]
    if optimal:
        nexts = sorted({structure.collocation[t] for t in optimal})
        if len(nexts) == 1:
            return TheoryPrediction("optimal", nexts[0], f"optimal token(s) {', '.join(optimal)} under {q!r}")
        return TheoryPrediction("none", None, f"optimal tokens {', '.join(optimal)} continue differently ({', '.join(nexts)})")
    free = [t for t in present if t in cats.non_comparable]
    if not free:
        return TheoryPrediction("none", None, f"only non-optimal tokens under {q!r}")
    nexts = sorted({structure.collocation[t] for t in free})
    if len(nexts) == 1:
        return TheoryPrediction("non-comparable", nexts[0], f"non-comparable token(s) {', '.join(free)} above non-optimal ones under {q!r}")
    return TheoryPrediction("none", None, f"non-comparable tokens {', '.join(free)} continue differently ({', '.join(nexts)})")


def unseen_sentences(
    structure: DatasetStructure,
    max_len: int | None = None,
    n_samples: int = 2000,
    seed: int = 0,
    enumerate_limit: int = 20000,
) -> list[tuple[str, ...]]:
    """Sentences (length 2 … max_len, default min(L_max, :data:`MAX_UNSEEN_LEN`)) not in the training set.

    All of them when there are at most ``enumerate_limit``; otherwise ``n_samples`` drawn at random,
    stratified so that about half have a theory prediction of each kind (optimal / non-comparable).
    """
    ds = structure.dataset
    max_len = min(ds.max_len, MAX_UNSEEN_LEN) if max_len is None else max_len
    if max_len < 2:
        raise TTLabInputError(f"unseen sentences need max length ≥ 2 (got {max_len})")
    seen = {s.tokens for s in ds.sentences}
    vocab = [t for t in ds.vocab if t in structure.collocation]
    total = 0
    for L in range(2, max_len + 1):  # stop counting once past the limit (|V|^L grows fast)
        total += len(vocab) ** L
        if total > enumerate_limit:
            break
    if total <= enumerate_limit:
        out = []
        for L in range(2, max_len + 1):
            out.extend(s for s in itertools.product(vocab, repeat=L) if s not in seen)
        return out
    rng = np.random.default_rng(seed)
    queries = [q for q in structure.orders if q in structure.collocation]
    if not queries:
        raise TTLabInputError("the dataset has no multi-token sentences, so no query has an order to generalize")
    want = {"optimal": n_samples // 2, "non-comparable": n_samples - n_samples // 2}
    got: dict[str, list[tuple[str, ...]]] = {k: [] for k in want}
    chosen: set[tuple[str, ...]] = set()
    for _ in range(50 * n_samples):
        if all(len(got[k]) >= want[k] for k in want):
            break
        q = queries[rng.integers(len(queries))]
        cats = structure.categories(q)
        target = "optimal" if len(got["optimal"]) < want["optimal"] and rng.random() < 0.5 else "non-comparable"
        if len(got[target]) >= want[target]:
            target = "optimal" if target == "non-comparable" else "non-comparable"
        lead = cats.optimal if target == "optimal" else [t for t in cats.non_comparable if t in structure.collocation]
        if not lead:
            continue
        L = int(rng.integers(2, max_len + 1))
        pool = cats.non_optimal + ([] if target == "non-comparable" else cats.non_comparable)
        body = [lead[rng.integers(len(lead))]]
        for _ in range(L - 2):
            body.append(pool[rng.integers(len(pool))] if pool else body[0])
        rng.shuffle(body)
        sent = tuple(body) + (q,)
        if sent in seen or sent in chosen:
            continue
        if theory_prediction(structure, sent).case != target:
            continue
        chosen.add(sent)
        got[target].append(sent)
    return got["optimal"] + got["non-comparable"]


def agreement_summary(cases: list[dict]) -> dict:
    """Agreement of model and theory over ``cases`` (dicts with ``case`` and ``agree``: True, False or None
    where the theory makes no prediction), overall and per case of :data:`CASES`; the cases are kept."""
    by_case = {}
    for c in CASES:
        sel = [x for x in cases if x["case"] == c]
        scored = [x["agree"] for x in sel if x["agree"] is not None]
        by_case[c] = {"n": len(sel), "agreement": float(np.mean(scored)) if scored else None}
    scored = [x["agree"] for x in cases if x["agree"] is not None]
    return {"n_sentences": len(cases), "n_with_prediction": len(scored),
            "agreement": float(np.mean(scored)) if scored else None, "by_case": by_case, "cases": cases}


def evaluate_generalization(
    model: NTPTransformer,
    W_ov: torch.Tensor,
    W_kq: torch.Tensor,
    sentences: list[tuple[str, ...]],
    batch_size: int = 4096,
) -> dict:
    """Model vs theory on ``sentences``: per-case agreement and every case listed."""
    structure = model.structure
    cases = []
    for i in range(0, len(sentences), batch_size):
        chunk = sentences[i : i + batch_size]
        preds = model.predict(W_ov, W_kq, chunk)
        for s, p in zip(chunk, preds):
            th = theory_prediction(structure, s)
            cases.append(
                {
                    "sentence": " ".join(s),
                    "case": th.case,
                    "theory_prediction": th.prediction,
                    "model_prediction": p,
                    "agree": None if th.prediction is None else p == th.prediction,
                    "reason": th.reason,
                }
            )
    return agreement_summary(cases)
