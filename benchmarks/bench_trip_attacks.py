"""The attacks on trajectories at the cabs' size: seconds per attack on the 200 cabs' test set
(18,117 trips) against a synthetic set of that size and of twice it, and the `locsynth evaluate`
command a user waits for.

Each attack runs through ``evaluate(groups=[name])``, so the time includes its training-set
baseline and its reference work (targets, their distances to the reference set): the cost of a
first evaluation, with no reference kept. Printed per attack: seconds at n and 2n synthetic trips,
their ratio (2.0 = linear in the synthetic set), the ratio to the compute floor, reading the three
sets as planar trajectories (what every attack must do once), and the ratios to the budget of 60 s
an attack may take on the cabs' full sets on 2 cores (issue 48: under 1.00 at n, a release of the
test set's size). The distance MIA runs
over every training and test trip (its default since issue 48) and, for its cost, over 1,000 of
each as before. warm: a second evaluation of the n-trip set with the references of the first kept
(``evaluate(references=...)``, what a benchmark's repeats and ``locsynth compare`` pay).

    locsynth prepare ../shared/data/sf-cabspotting/cabs200 --format cab-trips --cell-m 500 --split test=0.2 --out cabs200
    python benchmarks/bench_trip_attacks.py cabs200
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from locsynth import TraceSet
from locsynth.attacks.trip_geometry import trajectories
from locsynth.evaluation.evaluate import evaluate
from locsynth.synth.ngram import NGRAM

ATTACKS = ("distance_mia", "copies", "near_copies", "sniffing", "bayesian", "outliers")
#: seconds an attack may take on the cabs' full sets on 2 cores (issue 48)
BUDGET_S = 60.0


def seconds(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a prepared trips dataset (train/ and test/)")
    args = parser.parse_args()
    train, test = TraceSet.load(args.data / "train"), TraceSet.load(args.data / "test")
    model = NGRAM(epsilon=1.0).fit(train)
    sets = {n: model.sample(n, seed=0) for n in (test.n_traces, 2 * test.n_traces)}
    evaluate(train, test, sets[test.n_traces], groups=list(ATTACKS))        # warm-up: imports, numba
    floor = seconds(lambda: [trajectories(s) for s in (train, test, sets[test.n_traces])])
    print(f"test trips {test.n_traces:,}; training trips {train.n_traces:,}; floor (sets as trajectories) "
          f"{floor:.2f} s")
    print(f"{'attack':>20} {'n s':>8} {'2n s':>8} {'2n / n':>7} {'n / floor':>10} {'n / 60 s':>9} {'2n / 60 s':>10} "
          f"{'warm n s':>9}")
    runs = [(name, name, {}) for name in ATTACKS] + [("distance_mia (1,000)", "distance_mia", {"dmia_targets": 1000})]
    for label, name, options in runs:
        t = {n: seconds(lambda s=s: evaluate(train, test, s, groups=[name], options=options)) for n, s in sets.items()}
        # a second release against references kept from the first (what a benchmark's repeats pay)
        kept: dict = {}
        evaluate(train, test, sets[test.n_traces], groups=[name], options=options, references=kept)
        warm = seconds(lambda: evaluate(train, test, sets[test.n_traces], groups=[name], options=options,
                                        references=kept))
        n, n2 = test.n_traces, 2 * test.n_traces
        print(f"{label:>20} {t[n]:>8.2f} {t[n2]:>8.2f} {t[n2] / t[n]:>7.2f} {t[n] / floor:>10.1f} "
              f"{t[n] / BUDGET_S:>9.2f} {t[n2] / BUDGET_S:>10.2f} {warm:>9.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        sets[test.n_traces].save(Path(tmp) / "syn")
        command = ["locsynth", "evaluate", "--train", str(args.data / "train"), "--test", str(args.data / "test"),
                   "--synthetic", str(Path(tmp) / "syn"), "--out", str(Path(tmp) / "report")]
        wall = seconds(lambda: subprocess.run(command, check=True, capture_output=True))
        print(f"locsynth evaluate (every group, the command): {wall:.1f} s")


if __name__ == "__main__":
    main()
