"""LDPTrace (Du et al., PVLDB 2023) on the 200 San Francisco cabs' 72,467 training trips at 500 m:
the time of fit + sample as a library call and as the commands (issue 38's target: within 60 s on
2 cores), per epsilon and repeat, with the maximum length L the noisy first round chose and the
OUE bits the users' reports hold; PrivTrace's fit + sample on the same trips as the reference
ratio, and, once, the time OpenDP takes to draw every user's bits (user.reports at epsilon 1, the
protocol's own work, which the fit drew until the collector's tally was drawn in law).

A user's reports hold N^2 (length) + 2 N^2 (start, end) + (L - 1) x (the moves that stay on the
grid, 220 at N = 6) bits; the fit draws about 2 values' worth of uniforms per value instead
(privacy/oue.tally). Timings are of whatever machine runs this: on a shared 2-core machine they are
noisy and pessimistic, so the ratios are what to read.

    python benchmarks/bench_ldptrace.py [--train /tmp/cabs200/train] [--data ../shared/data]
        [--epsilons 0.5 1 2] [--repeats 3] [--no-cli]

The commands it times (the train set from `locsynth prepare ../shared/data/sf-cabspotting/cabs200
--format cab-trips --cell-m 500 --split test=0.2 --out cabs200`):

    locsynth fit ldptrace cabs200/train --epsilon 1 --out ldp && locsynth sample ldp --out ldp-syn --seed 1
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from locsynth import TraceSet
from locsynth.synth.ldptrace import LDPTrace, user
from locsynth.synth.privtrace import PrivTrace

#: issue 38's target for fit + sample of the 200 cabs on 2 cores
TARGET_S = 60.0


def train_set(args) -> TraceSet:
    """The prepared training trips (``--train``), or prepared now from ``--data`` into a temporary folder."""
    if args.train is not None and Path(args.train).exists():
        return TraceSet.load(args.train)
    from locsynth.data.prepare import prepare

    out = Path(tempfile.mkdtemp()) / "cabs200"
    sets = prepare(args.data / "sf-cabspotting" / "cabs200", "cab-trips", out, cell_m=500.0, split=0.2)
    return sets["train"]


def timed(fn):
    """(result, wall seconds, CPU seconds of every thread of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bits_per_user(n: int, L: int) -> int:
    """OUE bits in one user's reports on an n x n grid with maximum length L."""
    return n * n + 2 * n * n + (L - 1) * user.valid_moves(n).size


def library(train: TraceSet, eps: float, repeat: int) -> dict:
    model, fit_s, fit_cpu = timed(lambda: LDPTrace(epsilon=eps).fit(train))
    syn, sample_s, _ = timed(lambda: model.sample(seed=repeat))
    n = int(model.grid_size)
    bits = bits_per_user(n, model.max_len_) * train.n_traces
    return {"eps": eps, "repeat": repeat, "L": model.max_len_, "fit": fit_s, "cpu": fit_cpu, "sample": sample_s,
            "bits": bits, "length": float(syn.counts().mean())}


def users_bits(train: TraceSet, L: int) -> tuple[float, int]:
    """(seconds, bits) of OpenDP drawing every user's reports at epsilon 1 and maximum length L."""
    from locsynth.metrics.standard import planar
    from locsynth.synth.privtrace import markov
    from locsynth.synth.privtrace.grid import TwoLevelGrid, public_box

    xy = planar(train.space)
    grid = TwoLevelGrid(public_box(*xy), 6, np.ones(36, np.int64))
    cells, offsets = markov.states(grid, xy[0][train.loc], xy[1][train.loc], train.offsets)
    _, wall, _ = timed(lambda: user.reports(cells, offsets, 6, L, 1.0))
    return wall, bits_per_user(6, L) * train.n_traces


def cli(train_dir: Path, eps: float) -> tuple[float, float]:
    """Wall seconds of `locsynth fit ldptrace` and `locsynth sample`, each the whole command."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "locsynth.cli", "fit", "ldptrace", str(train_dir), "--epsilon", str(eps),
                        "--out", f"{tmp}/m"], check=True, capture_output=True)
        fit = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "locsynth.cli", "sample", f"{tmp}/m", "--out", f"{tmp}/s", "--seed", "1"],
                       check=True, capture_output=True)
        return fit, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, default=Path("/tmp/cabs200/train"))
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-cli", action="store_true")
    args = parser.parse_args()

    train = train_set(args)
    real = train.counts()
    print(f"{train.n_traces} training trips, {train.n_events} events, mean length {real.mean():.2f} locations")
    _, pt_s, _ = timed(lambda: PrivTrace(epsilon=1.0).fit(train).sample(seed=1))
    print(f"PrivTrace fit + sample at epsilon 1: {pt_s:.1f} s (reference)\n")
    print(f"{'eps':>5} {'rep':>3} {'L':>3} {'fit s':>7} {'CPU s':>7} {'sample s':>8} {'total/60s':>9} "
          f"{'xPrivTrace':>10} {'users Mbit':>10} {'syn length':>10}")
    rows = []
    for eps in args.epsilons:
        for r in range(args.repeats):
            row = library(train, eps, r)
            rows.append(row)
            total = row["fit"] + row["sample"]
            print(f"{eps:5g} {r:3d} {row['L']:3d} {row['fit']:7.1f} {row['cpu']:7.1f} {row['sample']:8.2f} "
                  f"{total / TARGET_S:9.2f} {total / pt_s:10.1f} {row['bits'] / 1e6:10.0f} {row['length']:10.2f}")
    totals = np.array([r["fit"] + r["sample"] for r in rows])
    print(f"\nfit + sample: median {np.median(totals):.1f} s, max {totals.max():.1f} s; "
          f"{(totals <= TARGET_S).sum()} of {totals.size} runs within {TARGET_S:g} s")
    L = int(np.median([r["L"] for r in rows]))
    wall, bits = users_bits(train, L)
    fits = np.median([r["fit"] for r in rows])
    print(f"the users' own bits at L = {L} ({bits / 1e6:.0f} million): {wall:.1f} s of OpenDP's sampling "
          f"({bits / wall / 1e6:.2f} million a second), {wall / fits:.0f} times the median fit")
    if not args.no_cli and args.train is not None and Path(args.train).exists():
        fit, sample = cli(args.train, 1.0)
        print(f"commands at epsilon 1: locsynth fit {fit:.1f} s, locsynth sample {sample:.1f} s "
              f"({(fit + sample) / TARGET_S:.2f} of the 60 s target, start-up and writing included)")


if __name__ == "__main__":
    main()
