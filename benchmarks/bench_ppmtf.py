"""PPMTF on PF Tokyo: fit (100 Gibbs sweeps), sampling (10 traces per user) and the PD test
(k = 10, eta = 1, every other training user a candidate), each as a ratio to its compute floor
and to the authors' single-threaded C++ on this kind of machine (92 s, 1.2 s, 13.5 s).

The floor of a phase is its flop count over this machine's measured dense matrix-multiply rate
(float32 for the fit, whose Gram sums are float32; float64 for the rest).
    python benchmarks/bench_ppmtf.py [--data ../shared/data/ppmtf-pf-tokyo]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from locsynth.data.prepare import prepare
from locsynth.synth.ppmtf import PPMTF
from locsynth.synth.ppmtf.generate import StepIndex

AUTHORS_SECONDS = {"fit": 92.0, "sample": 1.2, "pd_test": 13.5}


def gemm_rate(n: int = 1500, repeat: int = 3, dtype=np.float64) -> float:
    """Flops per second of a dense matrix product on this machine (all cores)."""
    a = np.random.default_rng(0).random((n, n)).astype(dtype)
    b = np.random.default_rng(1).random((n, n)).astype(dtype)
    a @ b
    t0 = time.perf_counter()
    for _ in range(repeat):
        a @ b
    return 2 * n ** 3 * repeat / (time.perf_counter() - t0)


def fit_flops(model, z: int, iterations: int) -> float:
    """Per sweep: each cell enters the precision of A, of B and of C or D once: z products for
    its feature, 2 z^2 for the rank-one update; each row a Cholesky (z^3 / 3)."""
    cells = sum(model.n_cells_.values())
    rows = model.n_users + 2 * model.space_.n_locations + model.time_.n_slots
    return iterations * (3 * cells * (z + 2 * z * z) + rows * z ** 3 / 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ppmtf-pf-tokyo"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sets = prepare(args.data, "pf", Path(tmp) / "pf")
    train = sets["train"]
    PPMTF(iterations=1).fit(train.select_users(np.arange(20))).sample()   # compile / load numba caches
    rate, rate32 = gemm_rate(), gemm_rate(dtype=np.float32)
    model = PPMTF(seed=0)
    t0 = time.perf_counter()
    model.fit(train)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    syn = model.sample(traces_per_user=10, seed=1)
    t_sample = time.perf_counter() - t0
    t0 = time.perf_counter()
    pd = model.pd_test(syn, k=10, eta=1.0)
    t_pd = time.perf_counter() - t0

    z, L, S, U = model.rank, train.space.n_locations, train.time.n_slots, train.n_users
    floors = {
        "fit": fit_flops(model, z, model.iterations) / rate32,       # float32 Gram sums
        # per user: R^I_n and its transpose (2 L^2 z), R^II_n (L S z); per step an MH row (3 L)
        "sample": (U * (2 * L * L * z + L * S * z) + syn.n_events * 3 * L) / rate,
    }
    steps = StepIndex(syn.loc.reshape(syn.n_traces, -1), np.arange(30), L)
    stays = int((steps.move_from == steps.move_to).sum())
    n_models = U          # every user's model once (candidates = all users)
    floors["pd_test"] = (n_models * (2 * L * L * z + L * S * z + stays * 4 * L + steps.M.nnz * 2)) / rate
    seconds = {"fit": t_fit, "sample": t_sample, "pd_test": t_pd}
    print(f"matrix-multiply rate: {rate / 1e9:.1f} GFlop/s float64, {rate32 / 1e9:.1f} float32; PD pass rate {pd.pass_rate:.3f}; "
          f"RMSE {model.rmse_[-1]:.4f}")
    print(f"{'phase':<9} {'seconds':>8} {'floor s':>8} {'x floor':>8} {'C++ s':>7} {'C++ / ours':>10}")
    for phase, sec in seconds.items():
        print(f"{phase:<9} {sec:>8.2f} {floors[phase]:>8.3f} {sec / floors[phase]:>8.1f} "
              f"{AUTHORS_SECONDS[phase]:>7.1f} {AUTHORS_SECONDS[phase] / sec:>10.1f}")
    print(f"fit + sample: {t_fit + t_sample:.2f} s (target < 15 s); PD test {t_pd:.2f} s (target < 2 s)")


if __name__ == "__main__":
    main()
