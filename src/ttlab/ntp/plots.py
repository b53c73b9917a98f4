"""The paper's Figure 2: six panels of training dynamics, with the theorem's norm bounds drawn; and the
ablations' comparison of the training variants (`ttlab reproduce`).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
from pathlib import Path  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402

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
