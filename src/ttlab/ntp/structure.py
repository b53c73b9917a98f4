"""Collocation, query-dependent partial orders, token categories and the assumption checker.

Definitions (paper A, Section 4):

* the *collocation* n(x) is the label of the one-token sentence [x];
* in a sentence with query q (its last token) and label y, a token x is *optimal* when n(x) = y and
  *non-optimal* otherwise, and x >_q x' for every optimal x and non-optimal x' of that sentence;
* for a query q each token is optimal (only ever above), non-optimal (only ever below), confused (both)
  or non-comparable (never ordered).

Assumption 1: a collocation exists for every token that appears in a sentence and is a function, every
order is acyclic and no token is confused (and so every sentence is realizable: some token in it has
n(x) = y). Assumption 3: in every sentence the number of optimal-token occurrences is at least the number
of occurrences of each non-optimal token.

The checks a run makes of its dataset before training: :func:`require_valid`, :func:`require_learnable`.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ttlab.errors import TTLabInputError
from ttlab.ntp.config import TrainConfig
from ttlab.ntp.dataset import NTPDataset, Sentence, line_groups

#: at most this many tokens are listed in the ``tokens`` field of an unrealizable-sentence violation
MAX_LISTED = 50
#: :meth:`DatasetStructure.report` lists non-comparable tokens while #orders × |V| stays below this
MAX_NON_COMPARABLE_LISTED = 1_000_000
MAX_VIOLATIONS_LISTED = 1_000
"""A report lists at most this many violations, each with at most :data:`MAX_LINES_LISTED` source lines, and counts
them all (``n_violations``, ``violations_by_kind``): a 760 KB file's 236 MB of JSON was every line of every one."""
MAX_LINES_LISTED = 100

VIOLATION_KINDS = (
    "missing_collocation",
    "ambiguous_collocation",
    "unrealizable_sentence",
    "confused_token",
    "cyclic_order",
    "assumption3",
)


@dataclass(frozen=True)
class Violation:
    """One way in which a dataset breaks Assumption 1 or 3.

    ``tokens`` are the tokens concerned (for an unrealizable sentence its distinct tokens, at most
    :data:`MAX_LISTED` of them); ``lines`` the 1-based source lines.
    """

    kind: str
    query: str | None
    tokens: list[str]
    lines: list[int]
    message: str

    def as_dict(self, max_lines: int | None = None) -> dict:
        """The violation as JSON: every field, its source lines cut to ``max_lines`` (``n_lines`` counts them all)."""
        lines = self.lines if max_lines is None else self.lines[:max_lines]
        return {"kind": self.kind, "query": self.query, "tokens": self.tokens, "lines": lines,
                "n_lines": len(self.lines), "message": self.message}


@dataclass
class QueryOrder:
    """The partial order >_q induced by the sentences whose query is q."""

    query: str
    edges: dict[tuple[str, str], set[int]] = field(default_factory=dict)  # (higher, lower) → source lines

    def above(self) -> set[str]:
        return {hi for hi, _ in self.edges}

    def below(self) -> set[str]:
        return {lo for _, lo in self.edges}


@dataclass
class TokenCategories:
    """Partition of the vocabulary under one query."""

    optimal: list[str]
    non_optimal: list[str]
    non_comparable: list[str]
    confused: list[str]

    def as_dict(self) -> dict:
        return {
            "optimal": self.optimal,
            "non_optimal": self.non_optimal,
            "non_comparable": self.non_comparable,
            "confused": self.confused,
        }


def _fmt_lines(lines: list[int]) -> str:
    shown = sorted(set(lines))
    if not shown or shown == [0]:
        return ""
    txt = ", ".join(str(x) for x in shown[:8]) + (" …" if len(shown) > 8 else "")
    return f" (line{'s' if len(shown) > 1 else ''} {txt})"


def _unrealizable(s: Sentence, known: list[str], first: dict[str, int], colloc: dict[str, str]) -> Violation:
    """The violation of sentence ``s``, none of whose tokens (``first``, their collocations among ``known``)
    has the collocation of its label."""
    shown = known[:8]
    nexts = ", ".join(f"n({t})={colloc[t]}" for t in shown) + (" …" if len(known) > 8 else "")
    distinct = list(itertools.islice(first, MAX_LISTED))  # walked to ell: all are in s
    return Violation(
        "unrealizable_sentence",
        s.query,
        distinct,
        list(s.lines),
        f"sentence '{s.short()}'{_fmt_lines(list(s.lines))} is unrealizable: no token in it has "
        f"collocation {s.label!r} ({nexts or 'no token has a collocation'})",
    )


def _missing_collocation(tok: str, lines: list[int]) -> Violation:
    """The violation of a token that appears in sentences on ``lines`` but has no collocation."""
    return Violation(
        "missing_collocation",
        None,
        [tok],
        lines,
        f"token {tok!r} appears in sentences{_fmt_lines(lines)} but has no collocation; add a "
        f"line '{tok} => NEXT' giving the token that follows {tok!r} on its own",
    )


def _add_missing_lines(missing: dict[str, set[int]], first: dict[str, int], colloc: dict[str, str],
                       members: list[int], sentences: list[Sentence]) -> None:
    """Add to ``missing`` the lines of the sentences of one line group (``members``, shortest first) that hold
    each token without collocation: walk the group from the longest sentence down; a token first seen at
    position p (``first``) is in the sentences longer than p."""
    absent = sorted((p, t) for t, p in first.items() if t not in colloc)
    lines_so_far: set[int] = set()
    for i in reversed(members):
        ell = len(sentences[i].tokens)
        while absent and absent[-1][0] >= ell:
            missing[absent.pop()[1]].update(lines_so_far)
        lines_so_far.update(sentences[i].lines)
    for _, t in absent:
        missing[t].update(lines_so_far)


class _Top2:
    """The two largest per-group maxima of counts that only grow (for Assumption 3 in O(1))."""

    def __init__(self) -> None:
        self.best: list[tuple[int, str]] = []  # (value, group), largest first, at most two

    def raise_to(self, group: str, value: int) -> None:
        self.best = [b for b in self.best if b[1] != group] + [(value, group)]
        self.best.sort(reverse=True)
        del self.best[2:]

    def max_except(self, group: str) -> int:
        for value, g in self.best:
            if g != group:
                return value
        return 0


class DatasetStructure:
    """Everything the theory derives from a dataset, plus the list of assumption violations.

    The checker walks the sentences that share a line (prefixes of one sequence) incrementally, so a
    sequence line of L tokens costs O(L) memory and, in time, O(L) plus the size of its orders.
    """

    def __init__(self, dataset: NTPDataset) -> None:
        self.dataset = dataset
        self.violations: list[Violation] = []
        self.collocation: dict[str, str] = {}
        self.orders: dict[str, QueryOrder] = {}
        self._build_collocation()
        self._walk_sentences()
        self._check_orders()

    # ------------------------------------------------------------------ collocation
    def _build_collocation(self) -> None:
        labels: dict[str, dict[str, list[int]]] = defaultdict(dict)
        for s in self.dataset.sentences:
            if len(s.tokens) == 1:
                labels[s.tokens[0]].setdefault(s.label, []).extend(s.lines)
        for tok, by_label in labels.items():
            self.collocation[tok] = next(iter(by_label))  # first seen; ambiguity reported below
            if len(by_label) > 1:
                lines = sorted(x for ls in by_label.values() for x in ls)
                options = ", ".join(f"{lab}{_fmt_lines(ls)}" for lab, ls in by_label.items())
                self.violations.append(
                    Violation(
                        "ambiguous_collocation",
                        None,
                        [tok, *by_label],
                        lines,
                        f"collocation of {tok!r} is ambiguous: the one-token sentence [{tok}] is followed by "
                        f"{options}; keep one next token per token",
                    )
                )

    # ------------------------------------------------------------------ orders
    def _walk_sentences(self) -> None:
        """Missing collocations, unrealizable sentences, the orders >_q and Assumption 3, line by line."""
        colloc = self.collocation
        sentences = self.dataset.sentences
        missing: dict[str, set[int]] = defaultdict(set)
        found: list[tuple[int, Violation]] = []
        # (query, label) → (line group, number of tokens with a collocation, lines) whose edges are in
        done: dict[tuple[str, str], tuple[int, int, tuple[int, ...]]] = {}
        for base, members in line_groups(sentences):
            members.sort(key=lambda i: len(sentences[i].tokens))
            first: dict[str, int] = {}  # token → first position in base
            counts: Counter = Counter()
            by_next: dict[str, list[str]] = defaultdict(list)  # n(t) → tokens t seen so far
            csum: Counter = Counter()  # n(t) → total count of those tokens
            gmax: Counter = Counter()  # n(t) → largest count among them
            top = _Top2()
            known: list[str] = []
            pos = 0
            for i in members:
                s = sentences[i]
                ell = len(s.tokens)
                while pos < ell:
                    t = base[pos]
                    counts[t] += 1
                    if t not in first:
                        first[t] = pos
                        if t in colloc:
                            known.append(t)
                            by_next[colloc[t]].append(t)
                    y = colloc.get(t)
                    if y is not None:
                        csum[y] += 1
                        if counts[t] > gmax[y]:
                            gmax[y] = counts[t]
                            top.raise_to(y, counts[t])
                    pos += 1
                if ell == 1:
                    continue
                optimal = by_next.get(s.label, [])
                if not optimal:
                    found.append((i, _unrealizable(s, known, first, colloc)))
                    continue
                version = (id(base), len(known), s.lines)
                if done.get((s.query, s.label)) != version:
                    done[(s.query, s.label)] = version
                    order = self.orders.setdefault(s.query, QueryOrder(s.query))
                    non_optimal = [t for t in known if colloc[t] != s.label]
                    for hi in optimal:
                        for lo in non_optimal:
                            order.edges.setdefault((hi, lo), set()).update(s.lines)
                n_opt = csum[s.label]
                if top.max_except(s.label) > n_opt:
                    for lo in known:
                        if colloc[lo] != s.label and counts[lo] > n_opt:
                            found.append((i, Violation(
                                "assumption3",
                                s.query,
                                [lo],
                                list(s.lines),
                                f"sentence '{s.short()}'{_fmt_lines(list(s.lines))} breaks Assumption 3: "
                                f"non-optimal token {lo!r} occurs {counts[lo]} times but optimal tokens only "
                                f"{n_opt} time(s)",
                            )))
            _add_missing_lines(missing, first, colloc, members, sentences)
        index = self.dataset.index
        for tok in sorted(missing, key=index.__getitem__):
            self.violations.append(_missing_collocation(tok, sorted(missing[tok])))
        found.sort(key=lambda iv: iv[0])
        self.violations.extend(v for _, v in found)

    def _check_orders(self) -> None:
        for q, order in self.orders.items():
            above, below = order.above(), order.below()
            for tok in sorted(above & below, key=self.dataset.index.get):
                ups = {hi: ls for (hi, lo), ls in order.edges.items() if lo == tok}
                downs = {lo: ls for (hi, lo), ls in order.edges.items() if hi == tok}
                lines = sorted({x for ls in (*ups.values(), *downs.values()) for x in ls})
                up_txt = ", ".join(f"{t}{_fmt_lines(ls)}" for t, ls in ups.items())
                down_txt = ", ".join(f"{t}{_fmt_lines(ls)}" for t, ls in downs.items())
                self.violations.append(
                    Violation(
                        "confused_token",
                        q,
                        [tok],
                        lines,
                        f"under query {q!r} token {tok!r} is confused: it is above {down_txt} but below "
                        f"{up_txt}; a token must be only optimal or only non-optimal for one query",
                    )
                )
            # cycles: strongly connected components with more than one token
            toks = sorted(above | below, key=self.dataset.index.get)
            pos = {t: i for i, t in enumerate(toks)}
            if not toks:
                continue
            rows = [pos[hi] for hi, _ in order.edges]
            cols = [pos[lo] for _, lo in order.edges]
            graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(toks), len(toks)))
            n_comp, label = connected_components(graph, directed=True, connection="strong")
            for c in range(n_comp):
                members = [toks[i] for i in np.flatnonzero(label == c)]
                if len(members) < 2:
                    continue
                inside = {(hi, lo): ls for (hi, lo), ls in order.edges.items() if hi in members and lo in members}
                lines = sorted({x for ls in inside.values() for x in ls})
                chain = "; ".join(f"{hi} > {lo}{_fmt_lines(ls)}" for (hi, lo), ls in inside.items())
                self.violations.append(
                    Violation(
                        "cyclic_order",
                        q,
                        members,
                        lines,
                        f"the order under query {q!r} has a cycle among {', '.join(members)}: {chain}",
                    )
                )

    # ------------------------------------------------------------------ views
    @property
    def valid(self) -> bool:
        """True when Assumptions 1 and 3 hold."""
        return not self.violations

    def categories(self, query: str) -> TokenCategories:
        """Optimal / non-optimal / non-comparable / confused tokens under ``query``."""
        order = self.orders.get(query, QueryOrder(query))
        above, below = order.above(), order.below()
        vocab = self.dataset.vocab
        return TokenCategories(
            optimal=[t for t in vocab if t in above and t not in below],
            non_optimal=[t for t in vocab if t in below and t not in above],
            non_comparable=[t for t in vocab if t not in above and t not in below],
            confused=[t for t in vocab if t in above and t in below],
        )

    def next_token_array(self) -> np.ndarray:
        """n(x) as token indices, −1 where a token has no collocation."""
        idx = self.dataset.index
        return np.array([idx[self.collocation[t]] if t in self.collocation else -1 for t in self.dataset.vocab])

    def kq_triples(self) -> np.ndarray:
        """Distinct (query, optimal, non-optimal) index triples: the constraints defining W*_kq."""
        idx = self.dataset.index
        triples = {
            (idx[q], idx[hi], idx[lo]) for q, order in self.orders.items() for (hi, lo) in order.edges
        }
        return np.array(sorted(triples), dtype=np.int64).reshape(-1, 3)

    def is_optimal(self, token: str, label: str) -> bool:
        """Whether ``token`` is optimal in a multi-token sentence labelled ``label`` (n(token) = label)."""
        return self.collocation.get(token) == label

    def optimal_mask(self, sentence_index: int) -> np.ndarray:
        """Boolean mask over the positions of sentence ``sentence_index`` marking optimal tokens."""
        s: Sentence = self.dataset.sentences[sentence_index]
        if len(s.tokens) == 1:
            return np.ones(1, dtype=bool)
        return np.array([self.collocation.get(t) == s.label for t in s.tokens], dtype=bool)

    def degenerate(self) -> dict[str, str]:
        """Stages of Algorithm 1 that have nothing to learn on this dataset, with the reason.

        ``"stage1"``: a one-token vocabulary (W*_ov has no constraint). ``"stage2"``: no sentence whose
        query orders an optimal above a non-optimal token, so W*_kq has no constraint and is undefined.
        """
        out: dict[str, str] = {}
        V = self.dataset.vocab_size
        if V < 2:
            out["stage1"] = (
                f"the vocabulary has a single token ({self.dataset.vocab[0]!r}): there is no other token to "
                "predict, so the collocation loss is 0 and W*_ov has no constraint"
            )
        if not any(order.edges for order in self.orders.values()):
            if all(len(s.tokens) == 1 for s in self.dataset.sentences):
                why = "no sentence has two or more tokens, so attention has no choice to make"
            else:
                why = ("no multi-token sentence holds both an optimal token (n(x) = its next token) and a "
                       "non-optimal one, so no query orders two tokens")
            out["stage2"] = f"{why}; W*_kq has no constraint and the stage-2 direction is undefined"
        return out

    def order_summary(self, query: str) -> dict:
        """The optimal, non-optimal and confused tokens under ``query`` (vocabulary order) and the number
        of non-comparable ones, counted, not listed (as :meth:`ttlab.ntp.fastcheck.QuickCheck.orders`):
        O(edges of the query), where :meth:`categories` is O(|V|)."""
        order = self.orders.get(query, QueryOrder(query))
        above, below = order.above(), order.below()
        key = self.dataset.index.__getitem__
        return {"optimal": sorted(above - below, key=key), "non_optimal": sorted(below - above, key=key),
                "confused": sorted(above & below, key=key),
                "n_non_comparable": self.dataset.vocab_size - len(above | below)}

    def report(self, max_listed: int | None = None) -> dict:
        """JSON-ready summary: validity, violations, vocabulary, collocation and orders.

        Every order lists its non-comparable tokens while all orders together list at most ``max_listed``
        (#orders × |V|; default :data:`MAX_NON_COMPARABLE_LISTED`); above that they are counted
        (:meth:`order_summary`): at |V| = 5,000 the lists took 3.2 GB and 425 MB of JSON.
        """
        cap = MAX_NON_COMPARABLE_LISTED if max_listed is None else max_listed
        listed = len(self.orders) * self.dataset.vocab_size <= cap
        return {
            "valid": self.valid,
            "source": self.dataset.source,
            "n_sentences": len(self.dataset.sentences),
            "n_occurrences": int(sum(s.count for s in self.dataset.sentences)),
            "vocab": list(self.dataset.vocab),
            "collocation": dict(self.collocation),
            "orders": {q: self.categories(q).as_dict() if listed else self.order_summary(q) for q in self.orders},
            "violations": [v.as_dict(MAX_LINES_LISTED) for v in self.violations[:MAX_VIOLATIONS_LISTED]],
            "n_violations": len(self.violations),
            "violations_by_kind": dict(Counter(v.kind for v in self.violations)),
            "degenerate": self.degenerate(),
        }


def require_valid(structure: DatasetStructure, max_shown: int = 5) -> None:
    """Raise a clear error listing the violations when the dataset breaks the assumptions."""
    if structure.valid:
        return
    lines = [f"  - {v.message}" for v in structure.violations[:max_shown]]
    more = len(structure.violations) - max_shown
    if more > 0:
        lines.append(f"  … and {more} more")
    raise TTLabInputError(
        f"{structure.dataset.source} breaks the paper's assumptions ({len(structure.violations)} violation(s)):\n"
        + "\n".join(lines)
        + "\nRun `ttlab ntp check` on it for the full list; training needs a realizable dataset."
    )


def require_learnable(structure: DatasetStructure, config: TrainConfig) -> None:
    """Refuse a run in which a stage has nothing to learn (see :meth:`DatasetStructure.degenerate`).

    A one-token vocabulary is always refused. Without W*_kq constraints stage 2 is refused unless
    ``stage2_steps`` is 0 with the two-stage schedule, which trains stage 1 only (no stage-2 rows).
    """
    bad = structure.degenerate()
    src = structure.dataset.source
    if "stage1" in bad:
        raise TTLabInputError(f"{src}: nothing to train: {bad['stage1']}; add sentences over at least two tokens")
    if "stage2" in bad and (config.schedule != "two-stage" or config.stage2_steps > 0):
        raise TTLabInputError(
            f"{src}: stage 2 has nothing to learn: {bad['stage2']}. Add sentences such as 'a b => n(a)' where "
            "b has a different next token, or train stage 1 only with schedule=two-stage and stage2_steps=0",
            params=("schedule", "stage2_steps")
        )


def analyze(dataset: NTPDataset) -> DatasetStructure:
    """Derive collocation, orders and categories of ``dataset`` and check the paper's assumptions."""
    return DatasetStructure(dataset)
