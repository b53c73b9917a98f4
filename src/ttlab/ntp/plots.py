"""The paper's Figure 2: six panels of training dynamics, with the theorem's norm bounds drawn.

Imports: matplotlib, numpy, ttlab.ntp.train; never ttlab.cli.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ttlab.ntp.train import TrainResult  # noqa: E402


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
