"""Trips at Porto size (issue 39): fit, sample and evaluate seconds of every trip method at 1, 4, 12
and 24 times the 200 cabs, their growth as log-log slopes, and each run's peak memory.

The sets: the 200 cabs' prepared trips (``locsynth prepare /work/shared/data/cabs200 OUT --format
cab-trips --cell-m 500 --split test=0.2``: 72,467 training and 18,117 test trips) and the sets
``trips_scale_data.py`` makes from them at 4x, 12x and 24x (its docstring: whole trips drawn with
replacement, each moved by whole cells or re-timed by whole hours; 24x = 1,739,208 training trips,
the Porto set's size, and as many test trips), written to a scratch directory, never the repository.
At 1x the test set is the cabs' own (18,117 trips).

Each (size, method) runs in a fresh process (so that its peak resident memory, ``getrusage``'s
maxrss, is its own): fit on the training trips, sample as many trips as they hold, then ``evaluate``
against the test trips (``--attacks``: all by default; the utility groups' seconds are printed
apart). ``--methods``: every registered synthesizer that takes trips, the baselines and DPTrip
aside; DPTrip (``--dptrip``) trains one epoch, whose DP-SGD work grows with the trips by the
paper's design, and is shown as seconds per epoch against the VAE's own floor: the VAE alone,
without noise and on one thread, timed over ``--floor-steps`` steps and scaled to the epoch's
steps (as docs/methods/trips.md measures it); it samples 20,000 trips (its generation is not in
issue 39's budgets).

    python benchmarks/bench_trips_scale.py [--prepared /tmp/cabs200] [--scaled /tmp/locsynth-trips-scale]
        [--factors 1 4 12 24] [--methods ngram,privtrace] [--dptrip] [--results /tmp/trips-scale.jsonl]

Results accumulate in ``--results`` (one JSON line per run; a run already there is not redone, so
the sizes can be run one at a time); the table is printed from it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
UTILITY = ("trips", "standard")
DPTRIP_SAMPLE = 20_000
#: issue 39's budgets at 24x: fit + sample, peak memory, evaluate
LIMITS = {"fit_sample_s": 180.0, "peak_gb": 8.0, "evaluate_s": 120.0, "slope": 1.1}


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def one(method: str, data: Path, attacks: str, evaluate_too: bool, dptrip_floor_steps: int) -> dict:
    """Fit, sample and evaluate ``method`` on ``data`` in this process (run by the parent per size)."""
    from locsynth import registry
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.data.traces import TraceSet

    train, test = TraceSet.load(data / "train"), TraceSet.load(data / "test")
    cls = registry.get(method)
    hyper = cls.hyperparameters()
    given = {"seed": 0} if "seed" in hyper else {}
    if "epsilon" in hyper:
        given["epsilon"] = 1.0
    if method == "dptrip":
        given["epochs"] = 1
    model = cls(**given)
    out = {"method": method, "trips": int(train.n_traces), "events": int(train.n_events)}
    clock = time.perf_counter()
    model.fit(train)
    out["fit"] = time.perf_counter() - clock
    clock = time.perf_counter()
    # DPTrip's sampling (its shortest-path trees per destination and hour) is not part of issue 39's
    # budgets: it draws DPTRIP_SAMPLE trips, and its rate is shown
    n = min(train.n_traces, DPTRIP_SAMPLE) if method == "dptrip" else train.n_traces
    synthetic = model.sample(n, seed=1) if model.tags.virtual_users else model.sample(users=np.arange(n), seed=1)
    out["sample"] = time.perf_counter() - clock
    out["peak_fit_sample_gb"] = peak_gb()
    out["synthetic_trips"] = int(synthetic.n_traces)
    if method == "dptrip":
        out["epoch"] = out["fit"]
        out["floor_epoch"] = vae_floor(train, model, dptrip_floor_steps)
    if evaluate_too:
        clock = time.perf_counter()
        report = evaluate(train, test, synthetic, attacks=attacks)
        out["evaluate"] = time.perf_counter() - clock
        out["groups"] = report.meta["seconds"]
        out["utility"] = sum(v for k, v in report.meta["seconds"].items()
                             if k.split("_")[0] in UTILITY or k in UTILITY)
    out["peak_gb"] = peak_gb()
    return out


def vae_floor(train, model, steps: int) -> float:
    """Seconds of one epoch of DPTrip's VAE alone, without noise, on one thread (docs/methods/trips.md):
    ``steps`` steps timed and scaled to the epoch's."""
    from locsynth.synth.dptrip.accounting import Run
    from locsynth.synth.dptrip.initializer import TripVAE
    from locsynth.synth.dptrip.records import trip_table
    from locsynth.synth.dptrip.training import dp_sgd, initializer_batches, sample_rate, steps_for, torch_threads

    table = trip_table(train)
    n = table.n_trips
    q = sample_rate(model.batch_size, n)
    vae = TripVAE(train.space.n_locations, model.hidden, model.latent)
    batches = initializer_batches(table.source, table.destination, table.hour, q, np.random.default_rng(0))
    with torch_threads(1):
        clock = time.perf_counter()
        dp_sgd(vae, batches, run=Run(0.0, q, steps), max_grad_norm=float(model.initializer_clip),
               batch_size=int(model.batch_size), learning_rate=model.learning_rates()[0], secure_noise=False)
        per_step = (time.perf_counter() - clock) / steps
    return per_step * steps_for(1, model.batch_size, n)


def trip_methods() -> list[str]:
    """Every registered synthesizer that takes the cabs' trips, the baselines and DPTrip aside."""
    from locsynth import registry
    from locsynth.synth.registry import skip_reason
    from locsynth.evaluation.report.compare import method_kind
    from locsynth.data.traces import TraceSet

    probe = TraceSet.load(Path(tempfile.gettempdir()) / "cabs200" / "test") if (
        Path(tempfile.gettempdir()) / "cabs200" / "test").is_dir() else None
    names = []
    for name in registry.names("synthesizer"):
        if name == "dptrip" or method_kind(name) == "baseline" or not registry.method(name).available():
            continue
        if probe is None or skip_reason(name, probe) is None:
            names.append(name)
    return names


def slope(xs, ys) -> float:
    """The log-log slope of ys against xs (least squares; 1 = linear)."""
    xs, ys = np.log(np.asarray(xs, float)), np.log(np.maximum(np.asarray(ys, float), 1e-9))
    return float(np.polyfit(xs, ys, 1)[0]) if len(xs) > 1 else float("nan")


def table(rows: list[dict]) -> None:
    by = {}
    for r in rows:
        by.setdefault(r["method"], {})[r["factor"]] = r
    print(f"\n{'method':10} {'size':>5} {'trips':>10} {'fit s':>8} {'sample s':>9} {'fit+sample':>10} "
          f"{'evaluate s':>10} {'utility s':>9} {'peak f+s GB':>11} {'peak GB':>8}")
    for method, sizes in by.items():
        for f in sorted(sizes):
            r = sizes[f]
            print(f"{method:10} {f:>4}x {r['trips']:>10,} {r['fit']:>8.1f} {r['sample']:>9.1f} "
                  f"{r['fit'] + r['sample']:>10.1f} {r.get('evaluate', float('nan')):>10.1f} "
                  f"{r.get('utility', float('nan')):>9.1f} {r['peak_fit_sample_gb']:>11.2f} {r['peak_gb']:>8.2f}")
            if "epoch" in r:
                print(f"{'':10} {'':>5} {'':>10} epoch {r['epoch']:.1f} s, VAE floor {r['floor_epoch']:.1f} s, "
                      f"ratio {r['epoch'] / r['floor_epoch']:.2f}; {r['synthetic_trips'] / r['sample']:.0f} trips/s")
        fs = sorted(sizes)
        if len(fs) > 1:
            trips = [sizes[f]["trips"] for f in fs]
            parts = [("fit", lambda r: r["fit"]), ("sample", lambda r: r["sample"]),
                     ("fit+sample", lambda r: r["fit"] + r["sample"])]
            if all("evaluate" in sizes[f] for f in fs):
                parts += [("evaluate", lambda r: r["evaluate"]), ("utility", lambda r: r["utility"])]
            print(f"{'':10} slopes {fs[0]}x-{fs[-1]}x: " + ", ".join(
                f"{name} {slope(trips, [pick(sizes[f]) for f in fs]):.2f}" for name, pick in parts))
        if 24 in sizes:
            r = sizes[24]
            print(f"{'':10} 24x budgets: fit+sample {r['fit'] + r['sample']:.0f} s (<= {LIMITS['fit_sample_s']:.0f}), "
                  f"peak {r['peak_fit_sample_gb']:.1f} GB (<= {LIMITS['peak_gb']:.0f}), evaluate "
                  f"{r.get('evaluate', float('nan')):.0f} s (<= {LIMITS['evaluate_s']:.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path(tempfile.gettempdir()) / "cabs200")
    parser.add_argument("--scaled", type=Path, default=Path(tempfile.gettempdir()) / "locsynth-trips-scale")
    parser.add_argument("--factors", type=int, nargs="+", default=[1, 4, 12, 24])
    parser.add_argument("--methods", default=None, help="comma-separated (default: every registered trip method)")
    parser.add_argument("--dptrip", action="store_true", help="also DPTrip, one epoch against the VAE's floor")
    parser.add_argument("--floor-steps", type=int, default=300)
    parser.add_argument("--attacks", default="all")
    parser.add_argument("--no-evaluate", action="store_true")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds a run may take")
    parser.add_argument("--results", type=Path, default=Path(tempfile.gettempdir()) / "trips-scale.jsonl")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.data, args.attacks, not args.no_evaluate, args.floor_steps)))
        return
    methods = args.methods.split(",") if args.methods else trip_methods()
    if args.dptrip and "dptrip" not in methods:
        methods.append("dptrip")
    done = [json.loads(line) for line in args.results.read_text().splitlines()] if args.results.is_file() else []
    have = {(r["method"], r["factor"]) for r in done}
    for factor in args.factors:
        data = args.prepared if factor == 1 else args.scaled / f"x{factor}"
        if factor != 1 and not (data / "test" / "meta.json").is_file():
            sys.path.insert(0, str(HERE))
            from trips_scale_data import scaled

            scaled(args.prepared, data, factor)
        for method in methods:
            if (method, factor) in have:
                continue
            command = [sys.executable, __file__, "--one", method, "--data", str(data), "--attacks", args.attacks,
                       "--floor-steps", str(args.floor_steps)] + (["--no-evaluate"] if args.no_evaluate else [])
            try:
                result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(f"{method} at {factor}x: over {args.timeout:g} s, stopped", file=sys.stderr)
                continue
            if result.returncode:
                print(f"{method} at {factor}x failed:\n{result.stderr[-3000:]}", file=sys.stderr)
                continue
            row = {**json.loads(result.stdout.strip().splitlines()[-1]), "factor": factor}
            print(f"{method} {factor}x: fit {row['fit']:.1f} s, sample {row['sample']:.1f} s, evaluate "
                  f"{row.get('evaluate', float('nan')):.1f} s, peak {row['peak_gb']:.2f} GB", flush=True)
            with args.results.open("a") as f:
                f.write(json.dumps(row) + "\n")
            done.append(row)
    table([r for r in done if r["method"] in methods and r["factor"] in args.factors])


if __name__ == "__main__":
    main()
