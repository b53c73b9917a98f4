"""From a researcher's own texts and causal LM to paper B's predicted scaling exponents, in one call.

:func:`predict_exponents` embeds the texts with the model (:func:`ttlab.lm.embed.embed_texts`: the paper's window and
position sampling), estimates the intrinsic dimension of one layer's token vectors with the paper's protocol (MLE,
K = 20, arithmetic mean, batches of 4,096, spread over batches: :func:`ttlab.lm.embed.text_intrinsic_dimension`)
and predicts α_D = 2β/(2β + d) and α_N = 2β/d (Havrilla & Liao, Theorems 1–2), with the band of those predictions
over the ID estimators of :data:`ttlab.scaling.band.BAND_ESTIMATORS` run on the same vectors and batches.

Every choice is recorded in the result (:attr:`TextExponents.settings`, :attr:`TextExponents.provenance`), and
what would make the numbers look surer than they are is said in :attr:`TextExponents.warnings` (and issued as a
:class:`OneBatchWarning`): an ID from one batch has no spread.
"""

from __future__ import annotations

import html
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.protocol import PAPER
from ttlab.lm.configs import EmbedConfig

__all__ = ["OneBatchWarning", "TextExponents", "predict_exponents"]


class OneBatchWarning(UserWarning):
    """The ID came from one batch of vectors: it has no spread over batches (embed more text)."""


@dataclass(frozen=True)
class TextExponents:
    """Paper B's exponents predicted from the intrinsic dimension of a model's token embeddings of some texts.

    ``intrinsic_dim`` is the paper's estimate (MLE, its K and averaging rule, mean over ``n_batches`` batches);
    ``intrinsic_dim_std`` its spread over batches (None from one batch). ``alpha_d`` = 2β/(2β + d),
    ``alpha_n`` = 2β/d. ``band``: the same predictions from every band estimator's ID
    (:meth:`ttlab.scaling.band.PredictionBand.to_dict`), or None when not asked for."""

    model: str
    layer: int
    n_texts: int
    n_vectors: int
    intrinsic_dim: float
    intrinsic_dim_std: float | None
    n_batches: int
    beta: float
    alpha_d: float
    alpha_n: float
    band: dict[str, Any] | None
    settings: dict[str, Any]
    provenance: dict[str, Any] = field(repr=False)
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        spread = f" ± {self.intrinsic_dim_std:.2f}" if self.intrinsic_dim_std is not None else " (one batch)"
        band = ""
        if self.band is not None:
            band = (f", band α_D {self.band['lo']['alpha_d']:.3f}–{self.band['hi']['alpha_d']:.3f} over "
                    f"{len(self.band['estimator_set'])} estimators")
        return (f"TextExponents(model={self.model!r}, layer {self.layer}, {self.n_vectors} vectors from {self.n_texts} "
                f"texts: ID {self.intrinsic_dim:.2f}{spread} over {self.n_batches} batch(es); β = {self.beta:g}: "
                f"α_D {self.alpha_d:.3f}, α_N {self.alpha_n:.3f}{band})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of every field."""
        out = asdict(self)
        out["warnings"] = list(self.warnings)
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One row per estimator (the paper's MLE, then the band's): ``estimator``, ``id``, ``alpha_d``, ``alpha_n``,
        ``paper`` (True for the paper's estimate, the band's centre)."""
        if self.band is None:
            return [{"estimator": "mle", "id": self.intrinsic_dim, "alpha_d": self.alpha_d, "alpha_n": self.alpha_n,
                     "paper": True}]
        centre = self.band["central_estimator"]
        return sorted(({"estimator": name, "id": v["id"], "alpha_d": v["alpha_d"], "alpha_n": v["alpha_n"],
                        "paper": name == centre} for name, v in self.band["estimators"].items()),
                      key=lambda r: not r["paper"])

    def to_frame(self) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (pandas is optional: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError:
            raise TTLabInputError("to_frame needs pandas: pip install pandas (or use rows() / to_dict()).") from None
        return pd.DataFrame(self.rows())

    def _repr_html_(self) -> str:
        head = html.escape(repr(self))
        cells = "".join(
            f"<tr><td>{html.escape(r['estimator'])}</td><td>{r['id']:.2f}</td><td>{r['alpha_d']:.4f}</td>"
            f"<td>{r['alpha_n']:.4f}</td></tr>" for r in self.rows())
        notes = "".join(f"<li>{html.escape(w)}</li>" for w in self.warnings)
        return (f"<p>{head}</p><table><tr><th>estimator</th><th>ID</th><th>α_D</th><th>α_N</th></tr>{cells}</table>"
                + (f"<ul>{notes}</ul>" if notes else ""))


def predict_exponents(
    texts: Any,
    model: Any,
    tokenizer: Any = None,
    *,
    layer: int = -1,
    beta: float = 1.0,
    embed: EmbedConfig = EmbedConfig(),
    k: int = PAPER.k,
    average: str = PAPER.average,
    batch_size: int = PAPER.batch_size,
    band: bool = True,
    which: str = "final",
    text_field: str = "text",
    device: str = "cpu",
) -> TextExponents:
    """Paper B's α_D and α_N predicted from the intrinsic dimension of ``model``'s layer-``layer`` token embeddings of
    ``texts`` (see the module doc).

    ``texts``: a list of strings or a ``datasets.Dataset`` (``text_field``); ``model``: a Hugging Face causal LM
    object with its ``tokenizer``, or a model folder / .gguf / registry name / ttlab run (its own tokenizer).
    ``embed`` sets the sampling (its ``layers`` is replaced by ``layer``; seed ``embed.seed`` also seeds the batches).
    ``band=False`` skips the other estimators (faster). Smoothness ``beta`` is the theorems' β (1: Lipschitz)."""
    from dataclasses import replace

    from ttlab.lm.embed import embed_texts, text_intrinsic_dimension
    from ttlab.provenance import versions
    from ttlab.scaling.theory import alpha_d, alpha_n, check_beta

    beta = check_beta(beta)
    if isinstance(layer, bool) or not isinstance(layer, int):
        raise TTLabInputError(f"layer must be an integer layer index (-1: the last), got {layer!r}.", params=("layer",))
    cfg = replace(embed, layers=(layer,))
    emb = embed_texts(model, texts, tokenizer, cfg, which=which, text_field=text_field, device=device)
    est = text_intrinsic_dimension(emb, layer, batch_size=batch_size, k=k, average=average, seed=cfg.seed)
    d = est["intrinsic_dim"]
    notes = []
    if est["n_batches"] < 2:
        distinct = est["n_vectors"] - est["n_duplicates_removed"]
        notes.append(f"the ID comes from one batch ({distinct:,} distinct vectors of {est['n_vectors']:,}): it has no "
                     f"spread over batches; embed more text (≥ {2 * batch_size:,} distinct vectors give two batches "
                     f"of {batch_size:,}) or lower batch_size (the paper's is {PAPER.batch_size:,})")
        warnings.warn(notes[-1], OneBatchWarning, stacklevel=2)
    bands = _band(emb, est, beta, cfg.seed) if band else None
    return TextExponents(
        model=str(emb.meta["model"]["name"]), layer=int(est["layer"]), n_texts=int(emb.meta["corpus"]["n_texts"]),
        n_vectors=int(est["n_vectors"]), intrinsic_dim=d,
        intrinsic_dim_std=float(est["intrinsic_dim_std"]) if est["n_batches"] >= 2 else None,
        n_batches=int(est["n_batches"]), beta=beta, alpha_d=alpha_d(d, beta), alpha_n=alpha_n(d, beta), band=bands,
        settings={"embed": cfg.to_dict(), "layer": layer, "k": k, "average": average, "batch_size": batch_size,
                  "batch_size_used": est["batch_size"], "n_duplicates_removed": est["n_duplicates_removed"],
                  "which": which, "band": band},
        provenance={"model": emb.meta["model"], "texts": emb.meta["corpus"], "n_windows": emb.meta["n_windows"],
                    "versions": versions(), "batch_dims": est["batch_dims"]},
        warnings=tuple(notes),
    )


def _band(emb: Any, est: dict[str, Any], beta: float, seed: int) -> dict[str, Any]:
    """Every band estimator on the same vectors and batches as the paper's estimate → the prediction band (the
    paper's MLE ID as its centre)."""
    from ttlab.intrinsic_dim import compare
    from ttlab.scaling.band import BAND_ESTIMATORS, prediction_band

    with warnings.catch_warnings():  # duplicates are counted in the settings already
        warnings.simplefilter("ignore")
        res = compare(emb.layer(est["layer"]), [m for m in BAND_ESTIMATORS if m != "mle"], batch_size=est["batch_size"],
                      seed=seed, skip_infeasible=True)
    ids = {"mle": est["intrinsic_dim"], **res.ids()}
    return prediction_band(ids, beta=beta, central="mle").to_dict()
