"""The near-copy check against leaking and honest releases on the 200 cabs (issue 53): the table of
docs/attacks.md.

Honest releases: every trip method (NGRAM, PrivTrace, AdaTrace, DPT, LDPTrace) at epsilon 1, fitted
and sampled ``--repeats`` times with different seeds (DP noise is OpenDP's, unseeded), each release
of the test set's size. Leaking releases: an honest PrivTrace release with some of its trips
replaced by training trips (1 %, 2 %, 5 % of the training set), on ``--mutant-seeds`` seeds each:

- verbatim copies (1 %) and copies moved one cell north, south, east or west (2 %), as issue 48;
- jittered copies: every point moved by r (100, 200, 300 m) in a uniformly drawn direction, left
  where it lands (``free``: a release of coordinates) or snapped back to the nearest location
  (``snapped``: a release on the grid).

For each release: the copy check's and the near-copy check's p-values (flagged below 0.01) and the
distance MIA's TPR at 1 % FPR and its bound for the leaking ones (``--mia``), through the functions
``evaluate`` runs. Prints the table and the seconds of each check.

    locsynth prepare ../shared/data/sf-cabspotting/cabs200 --format cab-trips --cell-m 500 --split test=0.2 --out cabs200
    python benchmarks/bench_near_copies.py cabs200 [--repeats 4] [--mutant-seeds 2]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from locsynth import TraceSet, registry
from locsynth.attacks import copies, near_copies
from locsynth.attacks.trip_geometry import Trajectories, diagonal, public_box, trajectories
from locsynth.metrics.standard import planar

METHODS = ("ngram", "privtrace", "adatrace", "dpt", "ldptrace")
NAMES = {"ngram": "NGRAM", "privtrace": "PrivTrace", "adatrace": "AdaTrace", "dpt": "DPT", "ldptrace": "LDPTrace"}
JITTER_M = (100, 200, 300)
SHARES = (0.01, 0.02, 0.05)


def honest(method: str, train: TraceSet, n: int, seed: int) -> TraceSet:
    """A release of ``method`` at epsilon 1, fitted and sampled with ``seed``."""
    cls = registry.get(method)
    given = {"epsilon": 1.0, **({"seed": seed} if "seed" in cls.hyperparameters() else {})}
    model = cls(**given).fit(train)
    return model.sample(n, seed=seed) if model.tags.virtual_users else model.sample(users=np.arange(n), seed=seed)


def moved(t: Trajectories, rows: np.ndarray, rng, how: str, r: float, locations: np.ndarray,
          cell: float) -> Trajectories:
    """Training trajectories ``rows`` of ``t``: verbatim, moved one cell, or jittered by r (free or
    snapped back to the nearest location)."""
    from scipy.spatial import cKDTree

    part = t.subset(rows)
    x, y = part.x.copy(), part.y.copy()
    if how == "shifted":
        step = np.array([(1, 0), (-1, 0), (0, 1), (0, -1)])[rng.integers(0, 4, len(part))] * cell
        x, y = x + np.repeat(step[:, 0], part.lengths), y + np.repeat(step[:, 1], part.lengths)
    elif how != "verbatim":
        angle = rng.uniform(0, 2 * np.pi, x.size)
        x, y = x + r * np.cos(angle), y + r * np.sin(angle)
    if how in ("shifted", "snapped"):
        _, near = cKDTree(locations).query(np.column_stack([x, y]))
        x, y = locations[near, 0], locations[near, 1]
    return Trajectories(x, y, part.offsets)


def mutant(base: Trajectories, train: Trajectories, share: float, how: str, r: float, seed: int, locations,
           cell: float) -> Trajectories:
    """``base`` with share x |train| of its trajectories replaced by training ones, moved as ``how``."""
    rng = np.random.default_rng(seed)
    k = int(round(share * len(train)))
    copied = moved(train, np.sort(rng.choice(len(train), k, replace=False)), rng, how, r, locations, cell)
    keep = np.sort(rng.choice(len(base), len(base) - k, replace=False))
    return Trajectories.concat([base.subset(keep), copied])


def checks(release: Trajectories, train: Trajectories, test: Trajectories, far: float, reach: float) -> dict:
    out = {}
    for name, check in (("copies", lambda: copies.check_release(release, train, test, far)),
                        ("near", lambda: near_copies.check_release(release, train, test, reach))):
        start = time.perf_counter()
        out[name] = check()
        out[name + "_s"] = time.perf_counter() - start
    return out


def row(label: str, results: list[dict]) -> str:
    def span(values, fmt):
        lo, hi = min(values), max(values)
        return fmt.format(lo) if lo == hi else f"{fmt.format(lo)} to {fmt.format(hi)}"
    copy_p, near_p = [r["copies"].p_value for r in results], [r["near"].p_value for r in results]
    return (f"| {label} | {len(results)} | {span(copy_p, '{:.2g}')} | {sum(p < copies.ALPHA for p in copy_p)} of "
            f"{len(results)} | {span(near_p, '{:.2g}')} | {span([r['near'].score for r in results], '{:.2f}')} | "
            f"{sum(p < copies.ALPHA for p in near_p)} of {len(results)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a prepared trips dataset (train/ and test/)")
    parser.add_argument("--repeats", type=int, default=4, help="honest releases per method")
    parser.add_argument("--mutant-seeds", type=int, default=2)
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    train_ts, test_ts = TraceSet.load(args.data / "train"), TraceSet.load(args.data / "test")
    train, test = trajectories(train_ts), trajectories(test_ts)
    far = diagonal(public_box(train_ts.space))
    cell = near_copies.spacing(train_ts.space)
    reach = near_copies.REACH_CELLS * cell
    locations = np.column_stack(planar(train_ts.space))
    n = test_ts.n_traces
    print(f"training trips {len(train):,}, test trips {len(test):,}; spacing {cell:.1f} m, reach {reach:.0f} m",
          flush=True)
    print("| release (the 200 cabs, epsilon 1) | runs | copy p-value | copy flagged | near-copy p-value | "
          "near-copy score | near-copy flagged |")
    print("|---|---|---|---|---|---|---|")
    bases = [trajectories(honest("privtrace", train_ts, n, 100 + s)) for s in range(args.mutant_seeds)]
    kinds = [("verbatim", 0.0, (0.01,)), ("shifted", 0.0, (0.02,))] + [
        (how, r, SHARES) for how in ("free", "snapped") for r in JITTER_M]
    seconds = []
    for how, r, shares in kinds:
        for share in shares:
            results = [checks(mutant(base, train, share, how, r, s, locations, cell), train, test, far, reach)
                       for s, base in enumerate(bases)]
            seconds += [x["near_s"] for x in results]
            label = {"verbatim": "verbatim copies", "shifted": "copies moved one cell"}.get(
                how, f"copies jittered {r} m, {how}")
            print(row(f"PrivTrace + {share:.0%} {label}", results), flush=True)
    for method in args.methods.split(","):
        results = [checks(trajectories(honest(method, train_ts, n, s)), train, test, far, reach)
                   for s in range(args.repeats)]
        seconds += [x["near_s"] for x in results]
        print(row(f"{NAMES.get(method, method)}, honest", results), flush=True)
    print(f"near-copy check: {np.median(seconds):.2f} s a release (median of {len(seconds)}; "
          f"{min(seconds):.2f}-{max(seconds):.2f})")


if __name__ == "__main__":
    main()
