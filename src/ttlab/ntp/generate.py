"""Seeded random generators of realizable datasets (Assumptions 1 and 3 hold by construction).

Nothing here prints; :func:`write_dataset` writes a generated file (`ntp generate`) and
:func:`load_dataset` reads a dataset file or generates the random one (`ntp run`, `ntp generalize`),
both after the memory they need was estimated (:mod:`ttlab.ntp.cost`).

Construction, for a vocabulary of V tokens (both generators):

1. a random collocation n: V → V; every token gets the one-token sentence ``x => n(x)``;
2. for every query q a random split of the vocabulary into an optimal set O_q (fraction 25 %), a
   non-optimal set N_q (50 %) and the rest (q itself is in O_q or N_q);
3. each sentence picks a query q, a length L and a label y = n(o) of some o in O_q, then fills its
   positions with ≥ 1 occurrence of tokens from O_q ∩ n⁻¹(y) and distinct tokens from N_q \\ n⁻¹(y),
   each non-optimal token at most once, so the optimal count always covers Assumption 3.

A token is only ever optimal or only ever non-optimal under one query, so no token is confused and
every order is acyclic.

Two implementations of this construction, with different random streams:

* ``"dense"`` (:func:`generate_text` with ``method="dense"``) draws the roles of every query up front
  into a |V| × |V| table (|V|² bytes: 2.5 GB at |V| = 50,257) and then the sentences one by one; its
  output is checked by :func:`ttlab.ntp.structure.analyze` before it is returned. The reproduce parts
  use it; its output for a seed never changes.
* ``"large"`` draws the sentences' queries first (sorted), then builds the sentences query by query,
  drawing each query's roles once when it is reached: O(|V| + tokens) memory. Its time is
  O(#distinct queries · |V|) for the role draws (≈ 1 min at |V| = 50,257 and 200,000 sentences) plus
  O(tokens). It is realizable by the argument above (tested on random seeds; run ``ttlab ntp check``).

``method="auto"`` picks ``"large"`` when the dense role table would exceed :data:`DENSE_TABLE_BYTES`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import GENERATORS, DatasetSource, RandomSpec
from ttlab.ntp.cost import require_generable
from ttlab.ntp.dataset import NTPDataset
from ttlab.ntp.limits import DEFAULT_MEMORY_LIMIT_GIB
from ttlab.ntp.reading import ARROW
from ttlab.provenance import atomic_write_text

__all__ = ["DENSE_MAX_BYTES", "DENSE_TABLE_BYTES", "METHODS", "generate_dataset", "generate_text",
           "load_dataset", "resolve_method", "token_names", "write_dataset"]

METHODS = GENERATORS  # "auto", "dense", "large"
#: ``method="auto"`` uses the dense generator while its |V| × |V| int8 role table stays below this
#: (64 MiB: |V| ≤ 8,192); above it, the bounded-memory one
DENSE_TABLE_BYTES = 64 * 2**20
#: the dense generator is refused when its role table would exceed this (|V| > 46,340)
DENSE_MAX_BYTES = 2 * 2**30


def token_names(vocab_size: int) -> list[str]:
    """Names ``t00 … t19`` (zero-padded so they sort in index order)."""
    width = len(str(vocab_size - 1))
    return [f"t{i:0{width}d}" for i in range(vocab_size)]


def resolve_method(method: str, vocab_size: int) -> str:
    """``"dense"`` or ``"large"`` for ``method`` (``"auto"``: large when the role table exceeds
    :data:`DENSE_TABLE_BYTES`)."""
    if method not in METHODS:
        raise TTLabInputError(f"unknown generator {method!r}: choose one of {', '.join(METHODS)}")
    if method == "auto":
        return "large" if vocab_size * vocab_size > DENSE_TABLE_BYTES else "dense"
    if method == "dense" and vocab_size * vocab_size > DENSE_MAX_BYTES:
        raise TTLabInputError(
            f"the dense generator's role table at |V| = {vocab_size:,} would take {vocab_size**2 / 2**30:.1f} GiB "
            f"(|V|² bytes; limit {DENSE_MAX_BYTES / 2**30:g} GiB); use method=large (or auto)", params=("method",)
        )
    return method


def _dense_pairs(spec: RandomSpec, names: list[str], nxt: np.ndarray, rng: np.random.Generator) -> Iterator[tuple]:
    """The multi-token sentences of the dense generator, as (token indices, label index)."""
    V = spec.vocab_size
    f1, f12 = spec.optimal_fraction, spec.optimal_fraction + spec.non_optimal_fraction
    roles = np.empty((V, V), dtype=np.int8)  # roles[q, x]: 1 optimal, -1 non-optimal, 0 none
    for q in range(V):
        u = rng.random(V)
        roles[q] = np.where(u < f1, 1, np.where(u < f12, -1, 0))
        roles[q, q] = rng.choice([1, -1])
        if not (roles[q] == 1).any():
            roles[q, rng.choice([x for x in range(V) if x != q] or [q])] = 1
    made = attempts = 0
    while made < spec.n_sentences:
        attempts += 1
        if attempts > 100 * max(spec.n_sentences, 1):  # pragma: no cover - needs pathological fractions
            raise TTLabInputError("could not generate enough sentences; raise vocab_size or the optimal fraction",
                                  params=("vocab_size",))
        q = int(rng.integers(V))
        length = int(rng.integers(spec.min_len, spec.max_len + 1))
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
        yield body + [q], y
        made += 1


def _large_pairs(spec: RandomSpec, nxt: np.ndarray, rng: np.random.Generator) -> Iterator[tuple]:
    """The multi-token sentences of the bounded-memory generator, as (token indices, label index).

    No |V| × |V| array: each query's roles are two boolean |V|-vectors, alive while its sentences are made.
    """
    V = spec.vocab_size
    f1, f12 = spec.optimal_fraction, spec.optimal_fraction + spec.non_optimal_fraction
    by_class = np.argsort(nxt, kind="stable")
    class_start = np.searchsorted(nxt[by_class], np.arange(V + 1))
    queries = np.sort(rng.integers(V, size=spec.n_sentences))
    uq, counts = np.unique(queries, return_counts=True)
    for q, need in zip(uq.tolist(), counts.tolist()):
        u = rng.random(V)
        is_opt = u < f1  # optimal under q
        is_role = u < f12  # optimal or non-optimal under q
        q_opt = rng.choice([1, -1]) == 1
        is_opt[q], is_role[q] = q_opt, True
        if not is_opt.any():
            is_opt[(q + 1) % V] = is_role[(q + 1) % V] = True
        opt_q = np.flatnonzero(is_opt)
        non_q = np.flatnonzero(is_role & ~is_opt)
        made = tries = 0
        while made < need:
            tries += 1
            if tries > 100 * need:
                raise TTLabInputError(
                    f"could not generate {need} sentence(s) with query {q}: its optimal tokens all continue like "
                    "the query itself; raise vocab_size (the bounded-memory generator draws each query's sentences "
                    "together)", params=("vocab_size",)
                )
            length = int(rng.integers(spec.min_len, spec.max_len + 1))
            if q_opt:
                y = nxt[q]
            else:
                y = nxt[opt_q[rng.integers(opt_q.size)]]
                if y == nxt[q]:
                    continue
            members = by_class[class_start[y]:class_start[y + 1]]
            cand_opt = members[is_opt[members]]
            need_opt = 0 if q_opt else 1
            if cand_opt.size == 0 or length - 1 < need_opt:
                continue
            k_non = int(rng.integers(0, min(non_q.size, length - 1 - need_opt) + 1))
            non = non_q[rng.choice(non_q.size, size=k_non, replace=False)] if k_non else non_q[:0]
            non = non[(nxt[non] != y) & (non != q)]
            body = np.concatenate([non, cand_opt[rng.integers(cand_opt.size, size=length - 1 - non.size)]])
            rng.shuffle(body)
            yield body.tolist() + [q], int(y)
            made += 1


def _pairs(spec: RandomSpec, method: str) -> tuple[list[str], np.ndarray, Iterator[tuple]]:
    """Token names, the collocation n and the multi-token sentences (index lists, label) of ``spec``."""
    method = resolve_method(method, spec.vocab_size)
    rng = np.random.default_rng(spec.seed)
    names = token_names(spec.vocab_size)
    nxt = rng.integers(spec.vocab_size, size=spec.vocab_size)
    sents = _dense_pairs(spec, names, nxt, rng) if method == "dense" else _large_pairs(spec, nxt, rng)
    return names, nxt, sents


def text_and_stage2(spec: RandomSpec, method: str) -> tuple[str, bool]:
    """The explicit-line text of ``spec`` and whether stage 2 has something to learn: some multi-token
    sentence holds a non-optimal token (n(x) ≠ its label; every generated sentence holds an optimal one)."""
    names, nxt, sents = _pairs(spec, method)
    lines = [spec.header()]
    lines += [f"{names[x]} {ARROW} {names[nxt[x]]}" for x in range(spec.vocab_size)]
    orders = False
    for body, y in sents:
        orders = orders or bool((nxt[np.asarray(body)] != y).any())
        lines.append(f"{' '.join(names[t] for t in body)} {ARROW} {names[y]}")
    return "\n".join(lines) + "\n", orders


def _stage2_refusal(spec: RandomSpec, method: str) -> TTLabInputError:
    """Why ``spec``'s dataset cannot be trained in two stages, with the smallest vocab_size that can (or another
    way), as the error to raise."""
    from dataclasses import replace

    head = (f"vocab_size {spec.vocab_size} with n_sentences {spec.n_sentences} and seed {spec.seed} gives no "
            "sentence with a non-optimal token, so stage 2 has nothing to learn and `ttlab ntp run` would refuse "
            "the file")
    if spec.n_sentences == 0:
        return TTLabInputError(f"{head}; give n_sentences 1 or more", params=("n_sentences",))
    for v in range(spec.vocab_size + 1, spec.vocab_size + 65):
        try:
            if text_and_stage2(replace(spec, vocab_size=v), method)[1]:
                return TTLabInputError(f"{head}; the smallest vocab_size that works with these options is {v} (or "
                                       "try another seed)", params=("vocab_size",))
        except TTLabInputError:
            continue
    return TTLabInputError(f"{head}; raise vocab_size or try another seed", params=("vocab_size", "seed"))  # pragma: no cover


def generate_text(spec: RandomSpec, method: str = "dense", require_stage2: bool = False) -> str:
    """Explicit-line text of a random realizable dataset (a header comment, the collocation lines, then
    the sentences). ``method``: ``"dense"``, ``"large"`` or ``"auto"`` (see the module docstring).

    ``require_stage2``: refuse (:class:`TTLabInputError` naming the smallest vocab_size that works) a dataset
    whose sentences hold no non-optimal token — W*_kq would have no constraint and ``ttlab ntp run``
    would refuse it; a tiny vocabulary (|V| ≤ 3) often gives one."""
    text, orders = text_and_stage2(spec, method)
    if require_stage2 and not orders:
        raise _stage2_refusal(spec, method)
    return text


def generate_dataset(
    vocab_size: int = 20,
    n_sentences: int = 100,
    min_len: int = 2,
    max_len: int = 6,
    seed: int = 0,
    optimal_fraction: float = 0.25,
    non_optimal_fraction: float = 0.5,
    method: str = "dense",
) -> NTPDataset:
    """A random realizable dataset; see the module docstring for the construction and ``method``.

    The dense generator's dataset is parsed from its text (line numbers kept) and checked by the
    vectorized assumption checker (:func:`ttlab.ntp.fastcheck.quick_check`; the sentence-by-sentence
    checker when that does not apply: it took half the time of `ntp run --vocab 5000`, which then
    analyzes the dataset once more); the large one is built from its (sentence, label) pairs in
    O(tokens) memory.
    """
    spec = RandomSpec(vocab_size, n_sentences, min_len, max_len, seed, optimal_fraction, non_optimal_fraction)
    if resolve_method(method, vocab_size) == "dense":
        from ttlab.ntp.fastcheck import quick_check
        from ttlab.ntp.structure import analyze

        text = generate_text(spec, "dense")
        source = f"random(vocab={vocab_size}, sentences={n_sentences}, seed={seed})"
        ds = NTPDataset.from_text(text, source=source)
        qc = quick_check(text, source)
        if not (qc.valid if qc is not None else analyze(ds).valid):  # pragma: no cover - a construction bug
            raise AssertionError(f"generator produced an invalid dataset: run `ttlab ntp check` on {source}")
        return ds
    names, nxt, sents = _pairs(spec, "large")
    pairs = [((names[x],), names[nxt[x]]) for x in range(vocab_size)]
    pairs += [(tuple(names[t] for t in body), names[y]) for body, y in sents]
    return NTPDataset.from_pairs(pairs, source=f"random-large(vocab={vocab_size}, sentences={n_sentences}, seed={seed})")


def write_dataset(path: str | Path, spec: RandomSpec, method: str = GENERATORS[0],
                  memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB) -> None:
    """Write the random dataset ``spec`` to ``path`` (atomically) with generator ``method``, refused before
    anything is drawn when it would exceed the memory limit or give stage 2 nothing to learn."""
    require_generable(spec, resolve_method(method, spec.vocab_size), memory_limit_gib)
    atomic_write_text(path, generate_text(spec, method, require_stage2=True))


def load_dataset(source: DatasetSource, memory_limit_gib: float = DEFAULT_MEMORY_LIMIT_GIB) -> NTPDataset:
    """The file's dataset, or the random one (generator picked as `ntp generate --generator auto` does)."""
    if source.data is not None:
        return NTPDataset.from_file(source.data, memory_limit_gib=memory_limit_gib)
    spec = RandomSpec(source.vocab_size, source.n_sentences, source.min_len, source.max_len, source.seed)
    require_generable(spec, resolve_method("auto", source.vocab_size), memory_limit_gib, build_dataset=True)
    return generate_dataset(source.vocab_size, source.n_sentences, source.min_len, source.max_len, source.seed,
                            method="auto")
