"""PPMTF at Istanbul size: fit, sampling and the PD test at 1/4, 1/2 and full size.

The data are simulated (locsynth.data.simulate): 219,793 users, 1000 POIs, hourly instants, 12 two-hour
slots, ``--days`` days thinned to Foursquare-like sparsity (per-user check-in rates with mean
``--checkin-rate``: a few to a few hundred events per user). PPMTF runs with z = 16, lambda = 100,
rho = 1000; sampling draws one day per user; the PD test uses k = 10, eta = 1 and 32,000 candidates.

Per phase and size it prints wall time, the process' peak RSS, and the ratio of wall time to the
phase's compute floor: its flop count over this machine's measured matrix-multiply rate (float32
for the fit's Gram sums and the models' clamped row sums, float64 otherwise). Then the growth of
time per user from 1/4 to 1/2 to full size (1.00 = linear).

``--iterations`` below 100 (``--small-iterations`` for the sizes below full) shortens the fit: the
first sweep also builds the tensors and their row orders, every later sweep costs the same, so the
printout projects the time to the end of the first sweep + 99 x the mean of the later ones (with
one sweep: its time without the tensors, timed on their own). The PD test always runs on every trace: its cost is a part per
candidate (each candidate's tables, fixed at 32,000 candidates) plus a part per trace and candidate,
so it is not linear in traces and is never projected.

    python benchmarks/bench_scale.py [--users 219793] [--iterations 100] [--small-iterations 10]
"""

from __future__ import annotations

import argparse
import resource
import time

import numba
import numpy as np
from bench_ppmtf import fit_flops, gemm_rate
from bench_simulate import PeakRSS

from locsynth.data.simulate import simulate
from locsynth.synth.ppmtf import PPMTF
from locsynth.synth.ppmtf.tensors import build_tensors

ISTANBUL_USERS = 219_793


def timed(fn):
    with PeakRSS() as rss:
        t0 = time.perf_counter()
        out = fn()
        wall = time.perf_counter() - t0
    return out, wall, rss.peak / 2**30


def run(n_users: int, iterations: int, args, rates: dict) -> dict:
    train, t_sim, m_sim = timed(lambda: simulate(n_users, days=args.days, pois=1000,
                                                 checkin_rate=args.checkin_rate, seed=0))
    model = PPMTF(rank=16, lam=100, rho=1000, iterations=iterations, seed=0)
    _, t_build, _ = timed(lambda: build_tensors(train, model.lam, model.r_max, model.rho, seed=0))
    marks = []
    _, t_fit, m_fit = timed(lambda: model.fit(train, progress=lambda *_: marks.append(time.perf_counter())))
    first = marks[0] - (marks[-1] - t_fit)           # tensors, their row orders (made on first use), one sweep
    syn, t_sample, m_sample = timed(lambda: model.sample(days=1, seed=1))
    result, t_pd, m_pd = timed(lambda: model.pd_test(syn, k=10, eta=1.0, candidates=args.candidates, seed=3))

    z, L, S, T = 16, 1000, 12, 24
    n_cand = result.candidates.size
    # one model: clamped row sums (2 L^2 z, float32) + pi (2 S L z); PD models also G^T for the stays
    floors = {
        "fit": fit_flops(model, z, 100) / rates["f32"],
        "sample": n_users * 2 * L * L * z / rates["f32"] + syn.n_events * 4 * L * z / rates["f64"],
        "pd_test": n_cand * 3 * 2 * L * L * z / rates["f32"]
        + syn.n_traces * n_cand * (T - 1) * 4 * z / rates["f32"],
    }
    later = (marks[-1] - marks[0]) / (len(marks) - 1) if len(marks) > 1 else first - t_build
    full = {"fit": first + 99 * later, "sample": t_sample, "pd_test": t_pd}
    return {"users": n_users, "events": train.n_events, "cells": sum(model.n_cells_.values()), "simulate": t_sim,
            "iterations": iterations, "build": t_build, "first": first, "sweep": later, "wall": {"fit": t_fit, "sample": t_sample, "pd_test": t_pd},
            "full": full, "floor": floors,
            "peak_gb": {"simulate": m_sim, "fit": m_fit, "sample": m_sample, "pd_test": m_pd},
            "pass_rate": result.pass_rate, "rmse": model.rmse_[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=ISTANBUL_USERS)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--checkin-rate", type=float, default=0.05)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--candidates", type=int, default=32_000)
    parser.add_argument("--small-iterations", type=int, default=None,
                        help="Gibbs sweeps at the sizes below full (default: --iterations)")
    parser.add_argument("--fractions", default="0.25,0.5,1")
    args = parser.parse_args()

    warm = simulate(300, days=2, pois=1000, checkin_rate=0.2, seed=0)        # compile or load numba caches
    PPMTF(iterations=1).fit(warm).pd_test(PPMTF(iterations=1).fit(warm).sample(), k=2)
    rates = {"f32": gemm_rate(2000, dtype=np.float32), "f64": gemm_rate(2000)}
    print(f"threads {numba.get_num_threads()}; matrix multiply {rates['f32'] / 1e9:.0f} GFlop/s float32, "
          f"{rates['f64'] / 1e9:.0f} float64")
    rows = []
    for frac in (float(x) for x in args.fractions.split(",")):
        its = args.iterations if frac >= 1 or args.small_iterations is None else args.small_iterations
        r = run(int(round(args.users * frac)), its, args, rates)
        rows.append(r)
        print(f"\n{r['users']:,} users, {r['events']:,} events, {r['cells']:,} tensor cells "
              f"(simulated in {r['simulate']:.0f} s, {r['peak_gb']['simulate']:.2f} GB); tensors built in {r['build']:.1f} s; "
              f"{r['iterations']} sweeps, the first ending {r['first']:.1f} s into the fit, then {r['sweep']:.2f} s each; RMSE {r['rmse']:.4f}; PD pass rate {r['pass_rate']:.3f}")
        print(f"{'phase':<9} {'wall s':>9} {'100 sweeps s':>12} {'peak GB':>8} {'floor s':>9} {'x floor':>8}")
        for phase in ("fit", "sample", "pd_test"):
            wall, full = r["wall"][phase], r["full"][phase]
            print(f"{phase:<9} {wall:>9.1f} {full:>12.1f} {r['peak_gb'][phase]:>8.2f} "
                  f"{r['floor'][phase]:>9.1f} {full / r['floor'][phase]:>8.2f}")
    if len(rows) > 1:
        print("\ngrowth of time per user against the smallest size (1.00 = linear):")
        base = rows[0]
        for r in rows[1:]:
            ratios = {p: (r["full"][p] / r["users"]) / (base["full"][p] / base["users"])
                      for p in ("fit", "sample", "pd_test")}
            print(f"  {r['users']:,} users: " + ", ".join(f"{p} {v:.2f}" for p, v in ratios.items()))
        print("(the PD test's per-candidate tables do not grow with users, so its time per user falls)")
    print(f"\nprocess peak resident memory, simulation included: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GB")


if __name__ == "__main__":
    main()
