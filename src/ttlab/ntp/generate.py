"""Seeded random generator of realizable datasets (Assumptions 1 and 3 hold by construction).

Construction, for a vocabulary of V tokens:

1. a random collocation n: V → V; every token gets the one-token sentence ``x => n(x)``;
2. for every query q a random split of the vocabulary into an optimal set O_q, a non-optimal set N_q
   and the rest (q itself is in O_q or N_q);
3. each sentence picks a query q, a length L and a label y = n(o) of some o in O_q, then fills its
   positions with ≥ 1 occurrence of tokens from O_q ∩ n⁻¹(y) and distinct tokens from N_q \\ n⁻¹(y),
   each non-optimal token at most once, so the optimal count always covers Assumption 3.

A token is only ever optimal or only ever non-optimal under one query, so no token is confused and
every order is acyclic. The result is checked by :func:`ttlab.ntp.structure.analyze` before returning.
"""

from __future__ import annotations

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.ntp.dataset import ARROW, NTPDataset
from ttlab.ntp.structure import analyze


def token_names(vocab_size: int) -> list[str]:
    """Names ``t00 … t19`` (zero-padded so they sort in index order)."""
    width = len(str(vocab_size - 1))
    return [f"t{i:0{width}d}" for i in range(vocab_size)]


def _validate(vocab_size: int, n_sentences: int, min_len: int, max_len: int) -> None:
    if vocab_size < 2:
        raise TTLabInputError(f"--vocab must be at least 2 (got {vocab_size})")
    if n_sentences < 0:
        raise TTLabInputError(f"--sentences must be ≥ 0 (got {n_sentences})")
    if min_len < 2:
        raise TTLabInputError(
            f"--min-len must be at least 2 (got {min_len}); one-token sentences are the collocation lines, "
            "which the generator always writes"
        )
    if max_len < min_len:
        raise TTLabInputError(f"--max-len ({max_len}) must be ≥ --min-len ({min_len})")


def generate_text(
    vocab_size: int = 20,
    n_sentences: int = 100,
    min_len: int = 2,
    max_len: int = 6,
    seed: int = 0,
    optimal_fraction: float = 0.25,
    non_optimal_fraction: float = 0.5,
) -> str:
    """Explicit-line text of a random realizable dataset (collocation lines first)."""
    _validate(vocab_size, n_sentences, min_len, max_len)
    rng = np.random.default_rng(seed)
    names = token_names(vocab_size)
    nxt = rng.integers(vocab_size, size=vocab_size)
    lines = [f"# random realizable dataset: vocab={vocab_size} sentences={n_sentences} "
             f"len={min_len}..{max_len} seed={seed}"]
    lines += [f"{names[x]} {ARROW} {names[nxt[x]]}" for x in range(vocab_size)]

    roles = np.empty((vocab_size, vocab_size), dtype=np.int8)  # roles[q, x]: 1 optimal, -1 non-optimal, 0 none
    for q in range(vocab_size):
        u = rng.random(vocab_size)
        roles[q] = np.where(u < optimal_fraction, 1, np.where(u < optimal_fraction + non_optimal_fraction, -1, 0))
        roles[q, q] = rng.choice([1, -1])
        if not (roles[q] == 1).any():
            roles[q, rng.choice([x for x in range(vocab_size) if x != q] or [q])] = 1

    made = 0
    attempts = 0
    while made < n_sentences:
        attempts += 1
        if attempts > 100 * max(n_sentences, 1):  # pragma: no cover - needs pathological fractions
            raise TTLabInputError("could not generate enough sentences; raise --vocab or the optimal fraction")
        q = int(rng.integers(vocab_size))
        length = int(rng.integers(min_len, max_len + 1))
        opt_q = np.flatnonzero(roles[q] == 1)
        if roles[q, q] == 1:
            y = nxt[q]
        else:
            labels = np.unique(nxt[opt_q])
            labels = labels[labels != nxt[q]]
            if labels.size == 0:
                continue
            y = rng.choice(labels)
        cand_opt = opt_q[nxt[opt_q] == y]
        cand_non = np.flatnonzero((roles[q] == -1) & (nxt != y))
        cand_non = cand_non[cand_non != q]
        body_len = length - 1
        need_opt = 0 if roles[q, q] == 1 else 1
        if cand_opt.size == 0 or body_len < need_opt:
            continue
        k_non = int(rng.integers(0, min(cand_non.size, body_len - need_opt) + 1))
        body = list(rng.choice(cand_non, size=k_non, replace=False)) + list(
            rng.choice(cand_opt, size=body_len - k_non, replace=True)
        )
        rng.shuffle(body)
        tokens = [names[t] for t in body] + [names[q]]
        lines.append(f"{' '.join(tokens)} {ARROW} {names[y]}")
        made += 1
    return "\n".join(lines) + "\n"


def generate_dataset(
    vocab_size: int = 20,
    n_sentences: int = 100,
    min_len: int = 2,
    max_len: int = 6,
    seed: int = 0,
    optimal_fraction: float = 0.25,
    non_optimal_fraction: float = 0.5,
) -> NTPDataset:
    """A random realizable dataset; see the module docstring for the construction."""
    text = generate_text(vocab_size, n_sentences, min_len, max_len, seed, optimal_fraction, non_optimal_fraction)
    ds = NTPDataset.from_text(text, source=f"random(vocab={vocab_size}, sentences={n_sentences}, seed={seed})")
    structure = analyze(ds)
    if not structure.valid:  # pragma: no cover - a bug in the construction above
        raise AssertionError(f"generator produced an invalid dataset: {structure.violations[0].message}")
    return ds
