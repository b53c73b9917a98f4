"""The paper's Figure 2: six panels of training dynamics, with the theorem's norm bounds drawn; the
ablations' comparison of the training variants (`ttlab reproduce`); and the model against Theorem 3 on unseen
sentences (`ttlab ntp generalize`'s generalization.png).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402

from ttlab.errors import TTLabInputError  # noqa: E402
from ttlab.ntp.config import TrainResult  # noqa: E402
from ttlab.provenance import atomic_savefig  # noqa: E402


def dynamics_figure(result: TrainResult, title: str | None = None) -> plt.Figure:
    """Loss, cosine to W* and ‖W‖ with bounds: top row W_ov (stage 1), bottom row W_kq (stage 2).

    For the joint-training ablation the top row shows W_ov and the bottom row W_kq of the same steps.
    """
    cfg = result.config
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), constrained_layout=True)
    if cfg.schedule == "two-stage":
        rows = [("1", "stage 1: $W_{ov}$", "$L_0(W_{ov})$"), ("2", "stage 2: $W_{kq}$", r"$L(\theta)$")]
    else:
        rows = [("joint", "joint: $W_{ov}$", r"$L(\theta)$"), ("joint", "joint: $W_{kq}$", r"$L(\theta)$")]
    for i, (stage, label, loss_label) in enumerate(rows):
        r = result.rows(stage)
        t = r["step"]
        ax_loss, ax_cos, ax_norm = axes[i]
        ax_loss.semilogy(t, np.maximum(r["loss"], 1e-300), color="C0")
        ax_loss.set(title=f"{label} — loss", xlabel="t", ylabel=loss_label)
        if stage == "2" and np.isfinite(result.limit_loss):
            ax_loss.axhline(result.limit_loss, color="k", ls=":", lw=1, label="all attention on optimal")
            ax_loss.legend(fontsize=8)
        ov_row = cfg.schedule == "joint" and i == 0
        cos = r["cosine_ov"] if ov_row else r["cosine"]
        norm = r["norm_ov"] if ov_row else r["norm"]
        star = result.wov_star if (stage == "1" or ov_row) else result.wkq_star
        eta = cfg.eta0 if (stage == "1" or ov_row) else cfg.eta
        name = "W_{ov}" if (stage == "1" or ov_row) else "W_{kq}"
        ax_cos.plot(t, cos, color="C1")
        ax_cos.set(title=f"cosine to ${name}^*$", xlabel="t", ylabel=f"cos(${name}(t)$, ${name}^*$)")
        ax_cos.set_ylim(min(0.0, np.nanmin(cos) if np.isfinite(cos).any() else 0.0), 1.02)
        ax_norm.plot(t, norm, color="C2", label=f"$\\|{name}(t)\\|$")
        if star.norm > 0:
            ax_norm.plot(t, t * eta / (2 * star.norm), "k--", lw=1, label=r"$t\eta/(2\|W^*\|)$")
        ax_norm.plot(t, t * eta, "k:", lw=1, label=r"$t\eta$")
        ax_norm.set(title=f"norm of ${name}$ with the theorem's bounds", xlabel="t", ylabel="Frobenius norm")
        ax_norm.legend(fontsize=8)
    fig.suptitle(title or f"Training dynamics ({cfg.schedule}, {cfg.optimizer}, init={cfg.init})")
    return fig


def ablation_figure(runs: list[tuple[str, TrainResult]], path: str | Path) -> None:
    """Loss, cos(W_kq, W*_kq) and minimum optimal attention of every variant against W_kq's steps, saved to
    ``path`` (atomically)."""
    fig = MplFigure(figsize=(13, 3.8), layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, 3, i + 1) for i in range(3)]
    for i, (name, res) in enumerate(runs):
        stage = "2" if res.config.schedule == "two-stage" else "joint"
        rows = res.rows(stage)
        t = rows["step"]
        axes[0].semilogy(t, [max(v, 1e-300) for v in rows["loss"]], color=f"C{i}", label=name)
        axes[1].plot(t, rows["cosine"], color=f"C{i}", label=name)
        axes[2].plot(t, rows["min_optimal_attention"], color=f"C{i}", label=name)
    axes[0].set(title="loss L(θ)", xlabel="W_kq step t", ylabel="loss")
    axes[1].set(title="cos(W_kq(t), W*_kq)", xlabel="W_kq step t", ylabel="cosine")
    axes[2].set(title="minimum attention on optimal tokens", xlabel="W_kq step t", ylabel="attention")
    axes[1].set_ylim(-0.05, 1.02)
    axes[2].set_ylim(0, 1.02)
    axes[2].legend(fontsize=7, loc="lower right")
    atomic_savefig(fig, path, dpi=100)


#: :func:`generalization_figure` draws one bar per sentence up to this many, then aggregates by case
MAX_SENTENCE_ROWS = 50
#: the aggregate view draws at most this many points per case (every k-th sentence beyond)
MAX_POINTS_PER_CASE = 1500
_AGREE_COLORS = {True: "tab:green", False: "tab:red", None: "0.65"}


def _case_value(case: dict) -> float:
    """The model's probability of the theory's token, or of its own top token where the theory makes no prediction."""
    if "model_probability" not in case:
        raise TTLabInputError("the cases have no model_probability: evaluate them with probabilities=True "
                              "(ttlab.ntp.generalize.evaluate_generalization)")
    p = case.get("theory_probability")
    return float(case["model_probability"] if p is None else p)


def _short_context(case: dict, width: int = 40) -> str:
    """The sentence (shortened to ``width`` characters) after its line number when it has one."""
    text = case["sentence"] if len(case["sentence"]) <= width else case["sentence"][: width - 1] + "…"
    return f"line {case['line']}: {text}" if case.get("line") else text


def _clip(token: str | None, width: int = 16) -> str:
    """A token for a label: ``—`` for None, cut to ``width`` characters."""
    if token is None:
        return "—"
    return token if len(token) <= width else token[: width - 1] + "…"


def _sentence_bars(ax: Any, cases: list[dict]) -> None:
    """One horizontal bar per sentence: the model's probability of the theory's token, coloured by agreement."""
    y = np.arange(len(cases))
    values = [_case_value(c) for c in cases]
    colors = [_AGREE_COLORS[c["agree"]] for c in cases]
    ax.barh(y, values, color=colors, hatch=[None if c["agree"] is not None else "//" for c in cases], height=0.7)
    for yi, c in zip(y, cases):
        ax.text(1.02, yi, f"theory {_clip(c['theory_prediction'])} · model {_clip(c['model_prediction'])} "
                f"({c['model_probability']:.2f})", va="center", fontsize=8, parse_math=False)
    ax.set_yticks(y, [_short_context(c) for c in cases], fontsize=8, parse_math=False)
    ax.set_ylim(len(cases) - 0.5, -0.5)  # first sentence on top
    ax.set_xlim(0, 1.75)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.axvline(1.0, color="k", lw=0.6)
    ax.set_xlabel("model's probability of the theory's next token\n(green: the model agrees with the theory, red: it "
                  "does not; hatched: no theory prediction, the model's top token)", fontsize=9)


def _case_groups(ax: Any, cases: list[dict]) -> None:
    """Per case (optimal, non-comparable, none): a box of the model's probability of the theory's token, the
    sentences as points coloured by agreement, and the agreement above."""
    groups = [(name, [c for c in cases if c["case"] == name]) for name in ("optimal", "non-comparable", "none")]
    groups = [(name, sel) for name, sel in groups if sel]
    rng = np.random.default_rng(0)  # jitter only
    for i, (name, sel) in enumerate(groups):
        values = np.array([_case_value(c) for c in sel])
        ax.boxplot(values, positions=[i], widths=0.5, showfliers=False, manage_ticks=False)
        keep = np.arange(len(sel))[:: max(1, -(-len(sel) // MAX_POINTS_PER_CASE))]
        ax.scatter(i + rng.uniform(-0.18, 0.18, keep.size), values[keep], s=6, alpha=0.5, linewidths=0,
                   c=[_AGREE_COLORS[sel[k]["agree"]] for k in keep])
        scored = [c["agree"] for c in sel if c["agree"] is not None]
        label = (f"agreement {100 * np.mean(scored):.1f}%\n({sum(scored):,}/{len(scored):,})" if scored
                 else f"no prediction\n(model's top token, n = {len(sel):,})")
        ax.text(i, 1.04, label, ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(groups)), [f"{name}\n(n = {len(sel):,})" for name, sel in groups])
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylim(0, 1.22)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("model's probability of the theory's next token")
    ax.set_xlabel("Theorem 3's case of the sentence (green: the model agrees, red: it does not)")


def generalization_figure(cases: list[dict], *, ax: Any = None, title: str | None = None,
                          max_rows: int = MAX_SENTENCE_ROWS) -> MplFigure:
    """The model against Theorem 3 on ``cases`` (:func:`ttlab.ntp.generalize.evaluate_generalization`'s, with
    probabilities): up to ``max_rows`` sentences one bar each (the model's probability of the theory's token,
    coloured by agreement; the context, the theory's and the model's tokens written beside it), more grouped by
    case (a box and the sentences as points, the agreement above). Drawn on ``ax`` when given; returns the figure."""
    if not cases:
        raise TTLabInputError("no sentences to draw")
    per_sentence = len(cases) <= max_rows
    if ax is None:
        fig = MplFigure(figsize=(10, max(2.6, 1.3 + 0.3 * len(cases))) if per_sentence else (7.5, 4.8),
                        layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    (_sentence_bars if per_sentence else _case_groups)(ax, cases)
    scored = [c["agree"] for c in cases if c["agree"] is not None]
    agreement = f"agreement {100 * np.mean(scored):.1f}% of {len(scored):,}" if scored else "no theory prediction"
    ax.set_title(f"{title or 'Theorem 3 on unseen sentences'}: {len(cases):,} sentence(s), {agreement}",
                 fontsize=10, parse_math=False)
    return fig
