"""Data/model scaling sweeps and ID ablations on a tiny corpus: fits, selection, resume, figures, CLI, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ttlab.errors import TTLabInputError
from ttlab.lm.configs import GPTConfig, TrainConfig
from ttlab.lm.experiments import id_ablations, run_data_sweep, run_model_sweep
from ttlab.lm.presets import IDOptions, SweepData
from ttlab.scaling.analysis import geometric_sizes

from .conftest import make_texts

TRAIN = TrainConfig(batch_size=4, max_iters=16, lr=3e-3, warmup_iters=2, eval_interval=8, eval_iters=2, device="cpu",
                    threads=1, test_max_tokens=2000)
MODEL = GPTConfig(vocab_size=1, block_size=16, n_layer=1, n_head=2, n_embd=32)
ID = IDOptions(windows_per_doc=4, tokens_per_doc=12, batch_size=200, k=10)


@pytest.fixture(scope="module")
def sweep_data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    p = tmp / "corpus.jsonl"
    p.write_text("".join(json.dumps({"text": t}) + "\n" for t in make_texts(80, seed=5)))
    return SweepData(corpus=str(p), vocab_size=300, cache_dir=str(tmp / "cache"), val_frac=0.15, test_frac=0.15)


@pytest.fixture(scope="module")
def data_sweep(sweep_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("ds")
    res = run_data_sweep(out, data=sweep_data, model=MODEL, train=TRAIN, sizes=[300, 1000, 3000], lrs=[3e-3, 1e-2],
                         protocol="budget", id_options=ID, bootstrap=200)
    return out, res


def test_geometric_sizes():
    assert geometric_sizes(10, 1000, 3) == [10, 100, 1000]
    assert geometric_sizes(5, 5, 1) == [5]
    with pytest.raises(TTLabInputError):
        geometric_sizes(100, 10, 3)


def test_data_sweep_results_fit_and_prediction(data_sweep):
    out, res = data_sweep
    saved = json.loads((out / "results.json").read_text())
    for key in ("runs", "alpha_hat", "alpha_hat_ci", "intrinsic_dim", "alpha_pred", "points", "config", "versions"):
        assert key in saved
    assert len(res["runs"]) == 6 and all(r["status"] == "ok" for r in res["runs"])
    # one learning rate per size is selected: the lowest best validation loss
    for size in (300, 1000, 3000):
        rs = [r for r in res["runs"] if r["train_tokens"] == size]
        chosen = [r for r in rs if r["selected"]]
        assert len(chosen) == 1 and chosen[0]["best_val_loss"] == min(r["best_val_loss"] for r in rs)
        assert all(r["train_tokens"] == size and r["iters"] == 16 for r in rs)
    # α̂_D is minus the least-squares slope of log loss on log size (an independent computation)
    x = np.array([p["train_tokens"] for p in res["points"]], float)
    y = np.array([p["loss"] for p in res["points"]])
    slope = np.polyfit(np.log(x), np.log(y), 1)[0]
    assert res["alpha_hat"] == pytest.approx(-slope, rel=1e-9, abs=1e-12)
    # 3 points: the 95 % interval is the OLS t-interval (1 degree of freedom), not a degenerate bootstrap
    from scipy import stats

    lr = stats.linregress(np.log(x), np.log(y))
    half = stats.t.ppf(0.975, df=1) * lr.stderr
    assert res["alpha_hat_ci_method"].startswith("t-interval")
    assert res["alpha_hat_ci"] == pytest.approx([-slope - half, -slope + half], rel=1e-6)
    assert [p["loss"] for p in res["points"]] == pytest.approx([
        next(r for r in res["runs"] if r["selected"] and r["train_tokens"] == s)["mean_5_lowest_test"] for s in (300, 1000, 3000)], rel=1e-12)
    d = res["intrinsic_dim"]
    assert 0 < d < 32 and res["alpha_pred"] == pytest.approx(2 / (2 + d))
    assert res["id"]["run_dir"].endswith("D3000_s0_lr0.003") or res["id"]["run_dir"].endswith("D3000_s0_lr0.01")
    assert res["id"]["options"]["final_norm_in_last_layer"] is True and res["id"]["rows"][0]["layer"] == 1
    # the prediction band: every band estimator on the same embeddings, central = MLE K=20 mean
    from ttlab.scaling.band import BAND_ESTIMATORS

    band = saved["alpha_pred_band"]
    ids = res["id"]["rows"][0]["ids_by_estimator"]
    assert set(ids) == set(BAND_ESTIMATORS)
    assert band["kind"] == "alpha_d" and band["central_estimator"] == "mle"
    assert band["central"] == pytest.approx(2 / (2 + ids["mle"]["id"]))
    used = {k: v["id"] for k, v in ids.items() if v["id"] is not None}
    assert set(band["estimators"]) == set(used) and len(used) >= 8
    assert band["lo"] == pytest.approx(2 / (2 + max(used.values())))
    assert band["hi"] == pytest.approx(2 / (2 + min(used.values())))
    png = (out / "data_scaling.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert saved["config"]["protocol"] == "budget" and saved["config"]["train"]["eval_test"] is True


def test_band_mle_uses_the_sweeps_batches(data_sweep):
    """With K = 20 and the mean, the band's MLE is the sweep's own estimate (same vectors, same batches)."""
    from ttlab.lm.experiments import measure_run_id

    _, res = data_sweep
    opts = IDOptions(windows_per_doc=4, tokens_per_doc=12, batch_size=200, k=20, average="mean")
    row = measure_run_id(res["id"]["run_dir"], opts, band=True)["rows"][0]
    assert row["ids_by_estimator"]["mle"]["id"] == pytest.approx(row["intrinsic_dim"], rel=1e-12)
    assert row["ids_by_estimator"]["mle_harmonic"]["id"] == pytest.approx(row["intrinsic_dim_harmonic"], rel=1e-12)


def test_data_sweep_resumes_from_cache(data_sweep, sweep_data):
    out, res = data_sweep
    again = run_data_sweep(out, data=sweep_data, model=MODEL, train=TRAIN, sizes=[300, 1000, 3000], lrs=[3e-3, 1e-2],
                           protocol="budget", id_options=ID, bootstrap=200)
    assert all(r["cached"] for r in again["runs"])
    assert again["alpha_hat"] == res["alpha_hat"] and again["intrinsic_dim"] == res["intrinsic_dim"]
    # a lost task record is rebuilt from the finished run folder without retraining
    for f in (out / "tasks").glob("*.json"):
        f.unlink()
        break
    third = run_data_sweep(out, data=sweep_data, model=MODEL, train=TRAIN, sizes=[300, 1000, 3000], lrs=[3e-3, 1e-2],
                           protocol="budget", id_options=ID, bootstrap=200)
    assert sum(not r["cached"] for r in third["runs"]) == 1 and third["alpha_hat"] == res["alpha_hat"]


def test_model_sweep_and_id_ablations(sweep_data, tmp_path):
    models = [MODEL, MODEL.replace(n_embd=48), MODEL.replace(n_layer=2, n_embd=64)]
    res = run_model_sweep(tmp_path / "ms", models=models, data=sweep_data, train=TRAIN, protocol="early-stop",
                          id_options=ID, bootstrap=100)
    assert len(res["points"]) == 3 and res["alpha_hat"] is not None
    x = np.array([p["params_non_embedding"] for p in res["points"]], float)
    assert list(x) == sorted(x)
    assert [r["n_embd"] for r in res["id_by_model"]] == [32, 48, 64]
    big = res["id_by_model"][-1]
    assert res["alpha_pred"] == pytest.approx(2 / big["intrinsic_dim"])
    assert res["alpha_pred_band"]["kind"] == "alpha_n" and "ids_by_estimator" in big
    assert res["alpha_pred_band"]["central"] == pytest.approx(2 / big["ids_by_estimator"]["mle"]["id"])
    assert all("ids_by_estimator" not in r for r in res["id_by_model"][:-1])  # only the largest model
    assert all(r["stop_reason"] in ("early_stop", "max_iters") for r in res["runs"])
    abl = id_ablations([r["run_dir"] for r in res["runs"]], tmp_path / "abl", id_options=ID, position_edges=[0, 4, 16])
    assert len(abl["per_layer"]["rows"]) == 3 and [r["layer"] for r in abl["per_layer"]["rows"]] == [0, 1, 2]
    assert [r["positions"] for r in abl["per_position"]["rows"]] == [[0, 4], [4, 16]]
    assert [r["n_embd"] for r in abl["by_model"]] == [32, 48, 64]
    # the final layer of the deepest model in the per-layer ablation is the by-model figure of that model
    assert abl["per_layer"]["rows"][-1]["intrinsic_dim"] == pytest.approx(abl["by_model"][-1]["intrinsic_dim"])
    assert (tmp_path / "abl" / "id_ablations.png").read_bytes()[:4] == b"\x89PNG"


def test_bad_sweep_input(sweep_data, tmp_path):
    with pytest.raises(TTLabInputError, match="exceed"):
        run_data_sweep(tmp_path, data=sweep_data, model=MODEL, train=TRAIN, sizes=[10**9, 2 * 10**9, 3 * 10**9])
    with pytest.raises(TTLabInputError, match="smaller than block_size"):
        run_data_sweep(tmp_path, data=sweep_data, model=MODEL, train=TRAIN, sizes=[10, 1000, 2000])
    with pytest.raises(TTLabInputError, match="at least 3 distinct sizes"):
        run_data_sweep(tmp_path, data=sweep_data, model=MODEL, train=TRAIN, sizes=[1000, 2000, 2000])
    with pytest.raises(TTLabInputError, match="protocol"):
        run_data_sweep(tmp_path, data=sweep_data, model=MODEL, train=TRAIN, protocol="forever")
    with pytest.raises(TTLabInputError, match="learning rates"):
        run_data_sweep(tmp_path, data=sweep_data, model=MODEL, train=TRAIN, lrs=[-1.0])
    with pytest.raises(TTLabInputError, match="at least 3"):
        run_model_sweep(tmp_path, models=[MODEL], data=sweep_data, train=TRAIN)
    with pytest.raises(TTLabInputError, match="at least one run"):
        id_ablations([], tmp_path)


def test_cli_data_sweep(run_cli, sweep_data, tmp_path):
    args = ("lm", "data-sweep", "--out", tmp_path / "cli", "--corpus", sweep_data.corpus, "--cache-dir", sweep_data.cache_dir,
            "--vocab-size", "300", "--model", "1x2x32", "--block-size", "16", "--sizes", "300,1000,3000", "--seeds", "0",
            "--protocol", "budget", "--max-iters", "8", "--eval-interval", "4", "--eval-iters", "2", "--batch-size", "4",
            "--warmup-iters", "1", "--workers", "1", "--threads-per-task", "1", "--id-windows-per-doc", "4",
            "--id-batch-size", "200", "--id-k", "10", "--test-max-tokens", "1000")
    res = run_cli(*args)
    assert res.code == 0, res.err
    assert "α̂_D" in res.out and "predicted" in res.out
    saved = json.loads((tmp_path / "cli" / "results.json").read_text())
    assert saved["config"]["sizes"] == [300, 1000, 3000] and len(saved["runs"]) == 3
    for bad, msg in [(("--model", "1x2"), "LAYERSxHEADSxWIDTH"), (("--sizes", "a"), "comma-separated"),
                     (("--loss", "val"), "loss must be"), (("--lrs", "1e-3,x"), "comma-separated numbers")]:
        res = run_cli(*args, *bad)
        assert res.code == 2 and msg in res.err, (bad, res.err)


def test_presets_are_typed_and_text_is_parsed_by_the_cli_only():
    from ttlab.lm.presets import DATA_SWEEP_PRESETS, MODEL_SWEEP_PRESETS, sweep_kwargs

    assert DATA_SWEEP_PRESETS["quick"].sizes == (5_000, 11_900, 28_300, 67_300, 160_000)
    assert MODEL_SWEEP_PRESETS["quick"].lrs is None and MODEL_SWEEP_PRESETS["full"].seeds == (0, 1)
    kw = sweep_kwargs("model", "quick", models=["nano", (1, 2, 32), (2, 4, 64)], seeds=[3], max_tokens=5000,
                      lrs=(1e-3, 3e-3))
    assert [(m.n_layer, m.n_head, m.n_embd) for m in kw["models"]] == [(2, 2, 64), (1, 2, 32), (2, 4, 64)]
    assert kw["seeds"] == [3] and kw["max_tokens"] == 5000 and kw["lrs"] == [1e-3, 3e-3]
    kw = sweep_kwargs("data", "quick", model=(1, 2, 64), sizes=None, lrs=None)  # None keeps the preset's value
    assert kw["sizes"] == [5_000, 11_900, 28_300, 67_300, 160_000] and kw["model"].n_embd == 64
    for bad, msg in [(dict(seeds="0,1"), "seeds must be a sequence of integers"), (dict(sizes="1,2,3"), "sizes"),
                     (dict(lrs="1e-3"), "lrs must be a sequence of numbers"), (dict(model=(1, 2)), "model shape"),
                     (dict(model="huge"), "unknown model preset"), (dict(models=("nano",)), "unknown data-sweep option")]:
        with pytest.raises(TTLabInputError, match=msg):
            sweep_kwargs("data", "quick", **bad)


def test_cli_sweep_kinds_reject_each_others_options(run_cli, tmp_path):
    res = run_cli("lm", "model-sweep", "--out", tmp_path / "m", "--sizes", "1000,2000,3000")
    assert res.code == 2 and "ttlab lm data-sweep" in res.err and not (tmp_path / "m").exists()
    res = run_cli("lm", "data-sweep", "--out", tmp_path / "d", "--models", "nano,micro,mini")
    assert res.code == 2 and "ttlab lm model-sweep" in res.err
    res = run_cli("lm", "data-sweep", "--out", tmp_path / "d", "--model", "nano,micro")
    assert res.code == 2 and "one model shape" in res.err
    res = run_cli("lm", "model-sweep", "--help")
    assert res.code == 0 and "Model scaling" in res.out
