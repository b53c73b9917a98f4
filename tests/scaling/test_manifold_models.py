"""Regressors (softmax / ReLU-attention transformers, MLP) and one training run of the manifold sweep."""

from __future__ import annotations

import math
from dataclasses import asdict, replace

import pytest
import torch

from ttlab.errors import TTLabInputError
from ttlab.scaling.manifold_config import TrainSettings, quick_config
from ttlab.scaling.manifold_regression import lr_at, plan_tasks, train_run
from ttlab.scaling.regressor_config import RegressorConfig
from ttlab.scaling.regressors import (
    SelfAttention,
    TransformerRegressor,
    build_regressor,
    count_parameters,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/scaling/conftest.py


@pytest.mark.parametrize("arch", ["softmax", "relu", "mlp"])
def test_every_architecture_maps_a_batch_to_scalars_and_sees_every_coordinate(arch):
    torch.manual_seed(0)
    model = build_regressor(RegressorConfig(arch=arch, ambient=10, n_embd=16, n_layer=2, n_head=2, chunk=4))
    x = torch.randn(5, 10, requires_grad=True)
    y = model(x)
    assert y.shape == (5,)
    y.sum().backward()
    assert (x.grad.abs().sum(0) > 0).all()  # bidirectional: the read-out token depends on all chunks


def test_mlp_parameter_count():
    m = build_regressor(RegressorConfig(arch="mlp", ambient=16, n_embd=32, n_layer=3))
    assert count_parameters(m) == (16 * 32 + 32) + 2 * (32 * 32 + 32) + (32 + 1)


def test_relu_attention_matches_the_definition():
    torch.manual_seed(1)
    att = SelfAttention(8, 2, "relu")
    x = torch.randn(3, 5, 8)
    q, k, v = att.c_attn(x).split(8, dim=2)
    out = torch.zeros(3, 5, 8)
    for h in range(2):
        s = slice(4 * h, 4 * h + 4)
        w = torch.relu(q[..., s] @ k[..., s].transpose(1, 2) / 2.0) / 5  # ReLU(<q, k>/√d_h) / l
        out[..., s] = w @ v[..., s]
    torch.testing.assert_close(att(x), att.c_proj(out))
    soft = SelfAttention(8, 2, "softmax")
    soft.load_state_dict(att.state_dict())
    ref = torch.zeros(3, 5, 8)
    for h in range(2):
        s = slice(4 * h, 4 * h + 4)
        ref[..., s] = torch.softmax(q[..., s] @ k[..., s].transpose(1, 2) / 2.0, dim=-1) @ v[..., s]
    torch.testing.assert_close(soft(x), soft.c_proj(ref))
    assert not torch.allclose(att(x), soft(x))


def test_theory_transformer_reads_the_first_entry_of_the_last_token():
    torch.manual_seed(2)
    cfg = RegressorConfig(arch="relu", ambient=6, n_embd=8, n_layer=2, n_head=2, chunk=1)
    model = TransformerRegressor(cfg)
    assert cfg.n_tokens == 6 and "wpe" not in dict(model.named_parameters())  # fixed sinusoidal PE
    assert not any(isinstance(mod, torch.nn.LayerNorm) for mod in model.modules())
    x = torch.randn(4, 6)
    h = model.tokens(x)
    for block in model.blocks:
        h = block(h)
    torch.testing.assert_close(model(x), h[:, -1, 0])
    soft = TransformerRegressor(RegressorConfig(arch="softmax", ambient=6, n_embd=8, n_head=2, chunk=1))
    assert "wpe" in dict(soft.named_parameters())  # learned positions for the standard variant


def test_chunking_pads_the_last_token():
    cfg = RegressorConfig(arch="softmax", ambient=10, n_embd=8, n_head=2, chunk=4)
    model = TransformerRegressor(cfg)
    assert cfg.n_tokens == 3 and model.tokens(torch.randn(2, 10)).shape == (2, 3, 8)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"arch": "cnn"}, "unknown arch 'cnn'"),
        ({"n_embd": 10, "n_head": 4}, "n_head must be an integer >= 1 dividing n_embd=10"),
        ({"ambient": 8, "chunk": 9}, r"chunk .* must be an integer in \[1, D=8\]"),
        ({"n_layer": 0}, "n_layer must be an integer >= 1"),
        ({"pos": "rotary"}, "unknown pos .rotary.; choose one of learned, sinusoidal, or None"),
    ],
)
def test_bad_architectures_are_rejected(kwargs, match):
    with pytest.raises(TTLabInputError, match=match):
        RegressorConfig(**kwargs)  # validated on construction: an invalid config never exists
    with pytest.raises(TTLabInputError, match=match):
        replace(RegressorConfig(), **kwargs)


def test_schedule_warms_up_then_decays_to_zero():
    lrs = [lr_at(i, 1.0, 10, 100) for i in range(100)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(lrs[9:], lrs[10:]))  # monotone cosine decay
    assert lr_at(100, 1.0, 10, 100) == pytest.approx(0.0, abs=1e-12)
    assert lr_at(55, 1.0, 10, 100) == pytest.approx(0.5)
    ts = TrainSettings(batch_size=64, epochs=10, min_steps=50, max_steps=400)
    assert [ts.steps(n) for n in (32, 640, 10_000)] == [50, 100, 400]
    assert [ts.n_val(n) for n in (100, 4000, 100_000)] == [2048, 2048, 2048]  # the default: the same at every n
    ts = TrainSettings(n_val_min=256)
    assert [ts.n_val(n) for n in (100, 4000, 100_000)] == [256, 1000, 2048]
    with pytest.raises(TTLabInputError, match="min_steps"):
        TrainSettings(min_steps=10, max_steps=5)


def _tiny_task(arch: str = "mlp", n: int = 256, **train) -> dict:
    cfg = quick_config(archs=(arch,), ds=(1,), ambients=(8,), n_min=n, n_max=n, points=1, width=16, n_test=512,
                       n_features=64, train=TrainSettings(epochs=40, min_steps=150, max_steps=300, eval_points=10,
                                                          **train))
    return plan_tasks(cfg)["data"][0]


def test_training_learns_the_target_and_is_reproducible():
    task = _tiny_task()
    a = train_run(task)
    b = train_run(task)
    assert a["test_mse"] == b["test_mse"] and a["val_history"] == b["val_history"]  # same seed, same result
    assert a["val_history"][0][1] > 0.8  # untrained: about the target's variance (1) plus noise
    assert a["test_mse"] < 0.25  # learned most of the variance
    assert a["val_mse"] == min(v for _, v in a["val_history"])  # the best checkpoint is the one kept
    assert a["n_params"] == (8 * 16 + 16) + (16 * 16 + 16) + 17
    assert 0 < a["best_step"] <= a["steps_run"] <= a["steps_planned"] == 150
    assert a["step_limited"] == (a["best_step"] > 0.8 * 300)
    c = train_run({**task, "seed": 1})
    assert c["test_mse"] != a["test_mse"]


def test_step_limit_flag_and_early_stop():
    limited = train_run(_tiny_task(n=2048, limit_frac=0.5))  # 2048·40/128 = 640 steps, capped at 300
    assert limited["steps_planned"] == 300
    assert limited["step_limited"] == (limited["best_step"] > 150)
    overfit = train_run({**_tiny_task(n=32, patience_frac=0.2), "lr": 0.02})
    if overfit["stopped_early"]:
        assert overfit["steps_run"] - overfit["best_step"] > 0.2 * overfit["steps_planned"]
        assert overfit["steps_run"] < overfit["steps_planned"]


def test_transformer_task_runs():
    res = train_run(_tiny_task(arch="relu", n=64))
    assert math.isfinite(res["test_mse"]) and not res["diverged"] and res["threads"] >= 1
    assert asdict(RegressorConfig(**_tiny_task(arch="relu")["model"]))["chunk"] == 2  # D=8 in 4 tokens
