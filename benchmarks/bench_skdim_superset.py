"""ttlab against scikit-dimension on the options and versions ttlab added to match it (issue 24): MLE noise
model and global mode, FisherS, KNN, PH, lPCA's Kaiser / broken-stick / signal-rank versions, DANCo's MiND versions and
given calibration, one-set ESS. Same data, same settings; interleaved timing (``_timing.interleave``),
the same warm-up on both sides; every pair of estimates is checked equal before it is timed.

    python benchmarks/bench_skdim_superset.py --quick        # small sizes, ~1 minute
    python benchmarks/bench_skdim_superset.py --json-out r.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import interleave, load_note  # noqa: E402


def cases(quick: bool) -> list[tuple[str, object, object]]:
    """(name, ttlab call, scikit-dimension call); each call returns the estimate."""
    import skdim

    from ttlab.intrinsic_dim import KNN, LPCA, MLE, PH, DANCo, FisherS
    from ttlab.intrinsic_dim.single_set import ess_single_neighbourhood

    n_mle = 80 if quick else 300
    ball = skdim.datasets.hyperBall(n_mle, 5, random_state=0)
    Xm = np.c_[ball, 0.02 * np.random.default_rng(0).standard_normal((n_mle, 5))]
    rs = np.random.RandomState(0)
    n, p = (300, 64) if quick else (1000, 256)
    Xr = (rs.randn(n, p) * np.r_[6, 4, 3, np.ones(p - 3)]) @ np.linalg.qr(rs.randn(p, p))[0]
    nd = 300 if quick else 1000
    Xd = np.c_[skdim.datasets.hyperBall(nd, 6, random_state=1), np.zeros((nd, 4))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal = skdim.id.DANCo(k=10, D=10, random_state=0).fit(Xd).calibration_data_
    out = [
        ("mle_noise", lambda: MLE(k=20, dnoise="dnoiseGaussH", sigma=0.05).fit(Xm).dimension_,
         lambda: skdim.id.MLE(sigma=0.05, dnoise="dnoiseGaussH").fit(Xm, n_neighbors=20, comb="mean").dimension_),
        ("mle_global", lambda: MLE(k=20, neighborhood_based=False, global_k=10).fit(Xm).dimension_,
         lambda: skdim.id.MLE(K=10, neighborhood_based=False).fit(Xm, n_neighbors=20).dimension_),
    ]
    for ver in ("Kaiser", "broken_stick", "MP", "GD", "KN", "Minka", "denoised", "parallel", "scRMT"):
        opts = {"n_permutations": 20, "random_state": 0} if ver == "parallel" else {"random_state": 0}
        out.append((f"lpca_{ver}", lambda v=ver, o=opts: LPCA(ver=v, **o).fit(Xr).dimension_,
                    lambda v=ver, o=opts: skdim.id.lPCA(ver=v, **o).fit(Xr).dimension_))
    for ver in ("MIND_MLk", "MIND_MLi"):
        out.append((f"danco_{ver}", lambda v=ver: DANCo(ver=v, k=10).fit(Xd).dimension_,
                    lambda v=ver: skdim.id.DANCo(ver=v, k=10).fit(Xd).dimension_))
    out.append(("danco_given_calibration",
                lambda: DANCo(k=10, D=10, calibration_data=cal).fit(Xd).dimension_,
                lambda: skdim.id.DANCo(k=10, D=10, calibration_data=cal).fit(Xd).dimension_))
    nf = 1000 if quick else 5000
    Xf = np.c_[skdim.datasets.hyperSphere(nf, 6, random_state=2), np.zeros((nf, 3))]
    out.append(("fishers", lambda: FisherS().fit(Xf).dimension_, lambda: skdim.id.FisherS().fit(Xf).dimension_))
    out.append(("knn", lambda: KNN(k=5, ps=np.array([50, 100, 200]), M=2, random_state=0).fit(Xf).dimension_,
                lambda: skdim.id.KNN(k=5, ps=np.array([50, 100, 200]), M=2, random_state=0).fit(Xf).dimension_))
    Xp = skdim.datasets.hyperBall(400 if quick else 1500, 3, random_state=3)
    out.append(("ph", lambda: PH(nsteps=10, subsamples=3).fit(Xp).dimension_,
                lambda: skdim.id.PH(nsteps=10, subsamples=3, random_state=0).fit(Xp).dimension_))
    out.append(("ess_fit_once", lambda: ess_single_neighbourhood(Xd[:40])[0],
                lambda: skdim.id.ESS().fit_once(Xd[:40]).dimension_))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small data and 2 repeats")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per side (default 2 quick, 5 full)")
    ap.add_argument("--json-out", type=Path, help="write every timing here")
    args = ap.parse_args()
    repeats = args.repeats or (2 if args.quick else 5)
    if repeats < 1:
        ap.error(f"--repeats must be >= 1, got {repeats}")
    import torch

    torch.set_num_threads(1)
    rows = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, ours, ref in cases(args.quick):
            a, b = float(ours()), float(ref())
            if not np.isclose(a, b, rtol=1e-6, atol=0):
                raise SystemExit(f"{name}: ttlab {a!r} != scikit-dimension {b!r}")
            t = interleave({"ttlab": ours, "scikit-dimension": ref}, repeats=repeats, warmup=1)
            r = t.ratio("ttlab", "scikit-dimension")
            rows[name] = {"estimate": a, **t.to_dict(), "ratio_of_min": r.of_min, "ratio_of_median": r.of_median}
            print(f"{name:26s} {a:10.5g}  " + t.line("ttlab", "scikit-dimension"), flush=True)
    print(load_note())
    if args.json_out:
        args.json_out.write_text(json.dumps({"rows": rows, "quick": args.quick, "load": load_note()}, indent=1))


if __name__ == "__main__":
    main()
