"""AdaTrace (CCS 2018) on the 200 San Francisco cabs at 500 m (72,467 training trips): fit and sample
as library calls and as the commands a user runs, with defences off (issue 38's targets: fit +
sample within 60 s on 2 cores, and no slower than the authors' Java, whose
``Main.Synthesize_Trajectories`` makes them in about 11 s on one core) and on (the §5.2 defences);
the standard suite (``adatrace`` flavour) of AdaTrace beside PrivTrace's at the same epsilon, each
against the test trips.

Timings are of whatever machine runs this; on a shared 2-core machine they are pessimistic, so
the ratios are what to read.

    python benchmarks/bench_adatrace.py [--data ../shared/data] [--prepared /tmp/cabs200] [--epsilon 1]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from locsynth.metrics.standard import standard_metrics
from locsynth.synth.adatrace import AdaTrace
from locsynth.synth.privtrace import PrivTrace
from locsynth.data.traces import TraceSet

#: the authors' Java on the same trips, one core, defences off (REFERENCE.md)
JAVA_S = 11.0
#: issue 38's target for fit + sample on 2 cores
TARGET_S = 60.0
METRICS = ("query_error", "density_error", "trip_error", "length_error", "diameter_error", "pattern_f1",
           "kendall_tau")


def cabs(data: Path, prepared: Path | None, work: Path) -> tuple[TraceSet, TraceSet, Path]:
    """(train, test, train's folder): a prepared copy when given, else ``locsynth prepare`` of the cabs."""
    if prepared is not None and (prepared / "train").exists():
        return TraceSet.load(prepared / "train"), TraceSet.load(prepared / "test"), prepared / "train"
    out = work / "trips"
    subprocess.run([sys.executable, "-m", "locsynth.cli", "prepare", str(data / "sf-cabspotting" / "cabs200"),
                    "--format", "cab-trips", "--cell-m", "500", "--split", "test=0.2", "--out", str(out)], check=True)
    return TraceSet.load(out / "train"), TraceSet.load(out / "test"), out / "train"


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def run_cli(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "locsynth.cli", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--prepared", type=Path, default=Path("/tmp/cabs200"))
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train, test, train_dir = cabs(args.data, args.prepared, work)
        print(f"cabs200 at 500 m: {train.n_traces} training trips, {test.n_traces} test trips, "
              f"epsilon {args.epsilon:g}")
        AdaTrace(epsilon=args.epsilon).fit(train).sample(10, seed=0)                 # compile the numba kernels
        model, fit_s = timed(lambda: AdaTrace(epsilon=args.epsilon).fit(train))
        syn, sample_s = timed(lambda: model.sample(seed=1))
        total = fit_s + sample_s
        print(f"\n  library, defences off: fit {fit_s:.2f} s + sample {sample_s:.2f} s = {total:.2f} s "
              f"({syn.n_traces} trips, {model.summary()['states']} cells, {model.summary()['length_family']} lengths)")
        print(f"    against the 60 s target: {total / TARGET_S:.2f} x; against the authors' Java (11 s, one core): "
              f"{total / JAVA_S:.2f} x")
        fit_cli = run_cli(["fit", "adatrace", str(train_dir), "--epsilon", str(args.epsilon), "--out",
                           str(work / "ada")])
        sample_cli = run_cli(["sample", str(work / "ada"), "--out", str(work / "ada-syn"), "--seed", "1"])
        print(f"  commands (`locsynth fit adatrace` + `locsynth sample`, start-up and files included): "
              f"{fit_cli:.2f} s + {sample_cli:.2f} s = {fit_cli + sample_cli:.2f} s "
              f"({(fit_cli + sample_cli) / JAVA_S:.2f} x the Java)")
        guarded, gfit = timed(lambda: AdaTrace(epsilon=args.epsilon, defences=True).fit(train))
        gsyn, gsample = timed(lambda: guarded.sample(seed=1))
        print(f"\n  library, defences on: fit {gfit:.2f} s + sample {gsample:.2f} s "
              f"({(gfit + gsample) / total:.1f} x defences off)")
        for line in guarded.describe_sample(gsyn):
            print(f"    {line}")
        # the suite's query and pattern counts compare sets of one size: each model makes the test set's
        n = test.n_traces
        pt = PrivTrace(epsilon=args.epsilon).fit(train)
        rows = {"adatrace": standard_metrics(test, model.sample(n, seed=2)),
                "adatrace + defences": standard_metrics(test, guarded.sample(n, seed=2)),
                "privtrace": standard_metrics(test, pt.sample(n, seed=2))}
        print(f"\n  standard suite against the {n} test trips, {n} synthetic trips each (adatrace flavour; "
              f"epsilon {args.epsilon:g}, one run each)")
        print("    " + f"{'':22}" + "".join(f"{m:>15}" for m in METRICS))
        for name, values in rows.items():
            print("    " + f"{name:22}" + "".join(f"{values[m]:15.3f}" for m in METRICS))


if __name__ == "__main__":
    main()
