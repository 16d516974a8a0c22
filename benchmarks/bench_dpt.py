"""DPT (synth/dpt.py) on the 200 San Francisco cabs' trips at 500 m: the time of fit + sample of
the 72,467 training trips (issue 38's acceptance: within 60 s on 2 cores), what the model kept
(reference systems, their weights, nodes per depth of the trees), and the trip metrics of paper
004 §8.4 (trip-length JSD, frequent-pattern precision, source-destination EMD) of DPT beside
NGRAM and PrivTrace at the same epsilon, against the test trips.

Timings are of whatever machine runs this; on a shared 2-core machine they are pessimistic.

    python benchmarks/bench_dpt.py [--train /tmp/cabs200/train --test /tmp/cabs200/test]
        [--data ../shared/data] [--epsilon 1] [--repeats 3] [--no-metrics]

Without a prepared --train folder the trips are prepared first, as the issue does:
``locsynth prepare ../shared/data/sf-cabspotting/cabs200 --format cab-trips --cell-m 500 --split test=0.2``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from locsynth.synth.dpt import DPT
from locsynth.data.traces import TraceSet

TARGET_S = 60.0


def prepared(args) -> tuple[TraceSet, TraceSet | None]:
    """The training (and test) trips: the given folders, or prepared from the raw files."""
    if args.train is not None and args.train.exists():
        test = TraceSet.load(args.test) if args.test is not None and args.test.exists() else None
        return TraceSet.load(args.train), test
    out = Path(tempfile.mkdtemp(prefix="locsynth-dpt-"))
    subprocess.run([sys.executable, "-m", "locsynth.cli", "prepare", str(args.data / "sf-cabspotting" / "cabs200"),
                    "--format", "cab-trips", "--cell-m", "500", "--split", "test=0.2", "--out", str(out)], check=True)
    return TraceSet.load(out / "train"), TraceSet.load(out / "test")


def timed(train: TraceSet, epsilon: float) -> tuple[float, float, DPT, TraceSet]:
    start = time.perf_counter()
    model = DPT(epsilon=epsilon).fit(train)
    fitted = time.perf_counter()
    syn = model.sample(seed=1)
    return fitted - start, time.perf_counter() - fitted, model, syn


def metrics(real: TraceSet, syn: TraceSet) -> dict:
    from locsynth.metrics.trips import trip_metrics

    m = trip_metrics(real, syn)
    fp = " ".join(f"{k}:{v:.2f}" for k, v in m["frequent_patterns"].items())
    return {"length_jsd": m["length_jsd"]["overall"], "fp": fp, "sd_emd": m["sd_emd"]["overall"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, default=Path("/tmp/cabs200/train"))
    parser.add_argument("--test", type=Path, default=Path("/tmp/cabs200/test"))
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-metrics", action="store_true")
    args = parser.parse_args()

    train, test = prepared(args)
    print(f"training trips: {train.n_traces:,}, events: {train.n_events:,}, locations: {train.space.n_locations}")
    DPT(epsilon=args.epsilon).fit(train.select_users(np.arange(200))).sample(5)      # compile the kernels
    runs = [timed(train, args.epsilon) for _ in range(args.repeats)]
    total = [f + s for f, s, _, _ in runs]
    fit_s, sample_s, model, syn = runs[int(np.argsort(total)[len(total) // 2])]
    print(f"DPT epsilon {args.epsilon}: fit {fit_s:.2f} s + sample {sample_s:.2f} s = {fit_s + sample_s:.2f} s "
          f"(median of {args.repeats}; all: {', '.join(f'{t:.2f}' for t in total)}; target {TARGET_S:.0f} s): "
          f"{'PASS' if np.median(total) <= TARGET_S else 'FAIL'}")
    print(f"  {syn.n_traces:,} synthetic trips (a DP count), {syn.n_events:,} events; "
          f"cells per trip real {np.mean(train.counts()):.2f}, synthetic {np.mean(syn.counts()):.2f}")
    print(f"  model: {model.summary()}")
    print(f"  ledger: {model.ledger_.totals()['trace']['epsilon']:.3f} per trip over "
          f"{model.ledger_.totals()['trace']['spends']} spends")
    if args.no_metrics or test is None:
        return
    from locsynth.synth.ngram import NGRAM
    from locsynth.synth.privtrace import PrivTrace

    rows = {"dpt": metrics(test, syn)}
    for name, cls in (("ngram", NGRAM), ("privtrace", PrivTrace)):
        start = time.perf_counter()
        other = cls(epsilon=args.epsilon).fit(train).sample(seed=1)
        print(f"  {name}: fit + sample {time.perf_counter() - start:.2f} s")
        rows[name] = metrics(test, other)
    print(f"{'method':<10} {'length JSD':>11} {'FP precision (top K: share)':>30} {'SD EMD':>9}"
          "   (against the test trips)")
    for name, row in rows.items():
        print(f"{name:<10} {row['length_jsd']:>11.4f} {row['fp']:>30} {row['sd_emd']:>9.4f}")


if __name__ == "__main__":
    main()
