"""The paper's Examples 1–2 computed end to end (used by `ttlab ntp example svop` and the report).
"""

from __future__ import annotations

import torch

from ttlab.ntp.config import TrainConfig
from ttlab.ntp.dataset import dataset_info
from ttlab.ntp.examples import SVOP_UNSEEN, svop
from ttlab.ntp.model import NTPTransformer
from ttlab.ntp.structure import analyze
from ttlab.ntp.train import cosine, train


def _qp_columns(st, ds) -> dict:
    """W*_kq's query columns from the general QP (Clarabel), unrounded: the reference Proposition 2's closed
    form is checked against (the default solver uses that closed form itself where it applies)."""
    from ttlab.ntp.maxmargin import max_margin_kq

    W = max_margin_kq(st.kq_triples(), ds.vocab_size, method="clarabel").W
    return {q: {t: float(W[ds.index[t], ds.index[q]]) for t in ds.vocab} for q in st.orders}


def svop_walkthrough(steps: int = 900) -> dict:
    """Collocation, orders, W*_kq columns (also from the general QP), training and the unseen-sentence
    predictions of SVOP, beside those of the same model with uniform attention (W_kq = 0)."""
    ds = svop()
    st = analyze(ds)
    model = NTPTransformer(ds, structure=st)
    res = train(ds, TrainConfig(stage1_steps=steps, stage2_steps=steps), model=model)
    orders = {}
    for q, order in st.orders.items():
        orders[q] = ", ".join(f"{hi} >_{q} {lo}" for hi, lo in order.edges)
    cols = {}
    W = res.wkq_star.W
    for q in st.orders:
        j = ds.index[q]
        cols[q] = {t: round(float(W[ds.index[t], j]), 4) for t in ds.vocab}
    unseen = {}
    sents = list(SVOP_UNSEEN)
    with torch.no_grad():
        logits, _ = model.forward(res.W_ov, res.W_kq, sents)
        probs = torch.softmax(logits, 1)
        uniform = model.forward(res.W_ov, torch.zeros_like(res.W_kq), sents)[0].argmax(1)  # control: W_kq = 0
    for k, s in enumerate(sents):
        i = int(probs[k].argmax())
        unseen["".join(s)] = {"model": ds.vocab[i], "prob": float(probs[k, i]), "expected": SVOP_UNSEEN[s],
                              "uniform_attention": ds.vocab[int(uniform[k])]}
    return {
        "sentences": [str(s) for s in ds.sentences],
        "collocation": st.collocation,
        "orders": orders,
        "categories": {q: st.categories(q).as_dict() for q in st.orders},
        "wkq_star_columns": cols,
        "wkq_star_qp_columns": _qp_columns(st, ds),
        "run": {"dataset": dataset_info(ds), "wov_star_norm": res.wov_star.norm, "wkq_star_norm": res.wkq_star.norm,
                "config": {"eta0": res.config.eta0, "eta": res.config.eta, "stage1_steps": res.config.stage1_steps,
                           "stage2_steps": res.config.stage2_steps}},
        "cosine_ov": cosine(res.W_ov, res.wov_star.W),
        "cosine_kq": cosine(res.W_kq, res.wkq_star.W),
        "loss_ov": float(res.rows("1")["loss"][-1]),
        "log_loss_ov": float(res.rows("1")["log_loss"][-1]),
        "loss_kq": float(res.rows("2")["loss"][-1]),
        "log_loss_kq": float(res.rows("2")["log_loss"][-1]),
        "unseen": unseen,
    }
