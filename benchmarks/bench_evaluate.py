"""How `evaluate` scales with users: time per phase at n/8, n/4, n/2 and n users (default n = 200,000).

A simulated city (24 hourly instants, 20 x 20 grid) is split in half into training and test
users; the synthetic set is another simulated city of the training size whose traces are
attributed to the training users (so both attacks run at full size). Prints each phase's
seconds and the ratio of time at one size to the size half as large (2.0 = linear).

    python benchmarks/bench_evaluate.py --users 200000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from locsynth.attacks.groups import released_as_is
from locsynth.evaluation.evaluate import evaluate
from locsynth.data.simulate import simulate

PHASES = ("population", "tm_emd", "tm_swd", "visit_fractions", "sglt", "reid", "mia")


def run(n_users: int, seed: int = 0) -> dict[str, float]:
    city = simulate(n_users, seed=seed)
    train, test = city.split(0.5, seed=seed)
    other = simulate(train.n_traces, seed=seed + 1)
    from dataclasses import replace
    synthetic = released_as_is(replace(other, users=train.users.copy()))
    t0 = time.perf_counter()
    report = evaluate(train, test, synthetic)
    seconds = dict(report.meta["seconds"])
    seconds["total"] = time.perf_counter() - t0
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200_000)
    args = parser.parse_args()
    run(2000)  # warm-up: numba compilation and imports
    sizes = [args.users // 8, args.users // 4, args.users // 2, args.users]
    rows = {n: run(n) for n in sizes}
    cols = (*PHASES, "total")
    print(f"{'users':>9} " + " ".join(f"{c:>10}" for c in cols))
    for n, sec in rows.items():
        print(f"{n:>9,} " + " ".join(f"{sec[c]:>10.3f}" for c in cols))
    for small, big in zip(sizes[:-1], sizes[1:]):
        ratio = {c: rows[big][c] / max(rows[small][c], 1e-9) for c in cols}
        print(f"ratio {big:,} / {small:,} (2.0 = linear): " + " ".join(f"{c} {ratio[c]:.2f}" for c in cols))


if __name__ == "__main__":
    main()
