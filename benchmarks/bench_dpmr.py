"""The DP mobility report's view of each trip method (issue 55): fit every method at one epsilon on a
prepared set of trips, sample as many trips as the test set holds, write each set with
``locsynth export --format skmob`` (the public ids, naive local times), and run
benchmarks/dpmr_compare.py in the report's own environment (``--python``: it pins pandas 2.1) on
the test trips against the training trips and every method's. Prints the selected measure of each
analysis (JSD, EMD in metres, Kendall tau, SMAPE), the mean over ``--repeats`` fits, and writes
every value to ``--out``/measures.csv::

    python benchmarks/bench_dpmr.py --data /tmp/cabs200 --python /work/dpmr-venv/bin/python
        [--methods ngram,privtrace,adatrace,dpt,ldptrace] [--repeats 1] [--epsilon 1] [--out /tmp/dpmr]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
#: the analyses shown, in the report's order
SHOWN = ("trips_over_time", "trips_per_weekday", "trips_per_hour", "visits_per_tile", "visits_per_tile_ranking",
         "od_flows", "travel_time", "jump_length", "radius_of_gyration")


def export(directory: Path, csv: Path) -> None:
    """``locsynth export DIRECTORY --format skmob`` (the command line, as a user runs it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "locsynth.cli", "export", str(directory),
                           "--out", str(csv), "--format", "skmob", "--overwrite"], env=env, capture_output=True,
                          text=True)
    if done.returncode:
        sys.exit(f"locsynth export failed: {done.stdout}{done.stderr}")


def sets(data: Path, out: Path, methods, epsilon: float, repeats: int) -> dict[str, Path]:
    """The CSV of the training trips and of every method's fit, by name."""
    from locsynth.data.traces import TraceSet
    from locsynth.synth import registry

    test = TraceSet.load(data / "test")
    export(data / "test", out / "test.csv")
    export(data / "train", out / "training.csv")
    named = {"training": out / "training.csv"}
    train = TraceSet.load(data / "train")
    for method in methods:
        for r in range(repeats):
            began = time.perf_counter()
            synthetic = registry.get(method)(epsilon=epsilon, seed=r).fit(train).sample(test.n_traces, seed=r)
            synthetic.save(out / f"{method}-{r}", overwrite=True)
            export(out / f"{method}-{r}", out / f"{method}-{r}.csv")
            named[f"{method}-{r}"] = out / f"{method}-{r}.csv"
            print(f"{method} #{r}: {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    return named


def table(measures: pd.DataFrame) -> str:
    chosen = measures.loc[measures["measure"] == "selected"].copy()
    chosen["method"] = chosen["alternative"].str.replace(r"-\d+$", "", regex=True)
    summary = chosen.groupby(["method", "analysis"], sort=False)["value"].mean().unstack()
    kinds = chosen.groupby("analysis")["selected_measure"].first()
    shown = [a for a in SHOWN if a in summary.columns]
    lines = ["| set | " + " | ".join(f"{a} ({kinds[a]})" for a in shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for method, row in summary.iterrows():
        lines.append(f"| {method} | " + " | ".join(f"{row[a]:.4g}" for a in shown) + " |")
    return "\n".join(lines)


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a prepared set of trips (train/ and test/)")
    parser.add_argument("--python", type=Path, required=True, help="the python of the report's environment")
    parser.add_argument("--methods", default="ngram,privtrace,adatrace,dpt,ldptrace")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--tile-km", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/dpmr"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    named = sets(args.data, args.out, args.methods.split(","), args.epsilon, args.repeats)
    command = [str(args.python), str(HERE / "dpmr_compare.py"), "--base", str(args.out / "test.csv"),
               "--out", str(args.out / "measures.csv"), "--tile-km", str(args.tile_km)]
    for name, path in named.items():
        command += ["--alternative", f"{name}={path}"]
    subprocess.run(command, check=True)
    print(table(pd.read_csv(args.out / "measures.csv")))


if __name__ == "__main__":
    main()
