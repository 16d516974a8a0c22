"""Trips beyond one machine (issue 56): every trip method fitted, sampled and evaluated by partitions
on a local Dask cluster whose workers' memory limits together are below the data's size.

The sets: ``trips_scale_data.py --trips N`` makes partitioned training and test sets of N trips
each from the 200 cabs' prepared trips (``locsynth prepare /work/shared/data/sf-cabspotting/cabs200
OUT --format cab-trips --cell-m 500 --split test=0.2``), whole trips drawn with replacement and moved
by whole cells or re-timed by whole hours, ``--partition-trips`` a partition (scratch: never the
repository). Each (size, method) runs in a fresh process, which starts a LocalCluster of
``--workers`` single-threaded workers of ``--memory-limit`` each: fit on the training partitions
(counts summed on the cluster, noise on the driver), sample as many trips as the DP count says
(a partitioned set written by the workers), then ``evaluate`` by partitions (the standard suite
over every trip, the rest on a stated uniform sample of ``--sample-trips`` trips a set, with
``--attacks``). Printed per run: seconds of each step, the
peak resident memory of each worker and of the driver, and whether a worker was restarted (a
worker over its limit is killed by its nanny: the run then says so).

``--prepare`` also makes the training trips back from GPS fixes (the trips written as fixes, one
Parquet file a partition) by ``prepare --format trips`` on the cluster (its seconds in the fit
column). ``--single`` also runs, at the sizes given, the fit in one process on the whole set in memory
(as ``bench_trips_scale.py``) ``--repeats`` times, for the spread of its results.

    python benchmarks/bench_trips_cluster.py [--prepared /tmp/cabs200] [--scaled /tmp/locsynth-cluster]
        [--sizes 2000000 20000000] [--methods ngram,privtrace] [--workers 2] [--memory-limit 1.25GiB]
        [--single 2000000] [--results /tmp/trips-cluster.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
METHODS = ("ngram", "privtrace", "adatrace", "dpt", "ldptrace")
#: the attacks evaluate runs by default: every one but the distance MIA, whose search for each target's
#: nearest trajectory slows down among these sets' near-copies (about 28 of every cab trip at 2 million):
#: 168 s of a 224 s evaluation of 50,000-trip samples on a loaded machine, and 38 minutes of a fit, sample
#: and evaluate at 200,000 (issue 53 reworks that search)
ATTACKS = ("copies", "sniffing", "bayesian", "outliers")
#: issue 56's budgets: fit + sample per method on 2 cores, growth of the time per trip from the
#: smallest to the largest size
LIMITS = {"fit_sample_s": 1800.0, "per_trip_growth": 1.3}


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _worker_state() -> dict:
    return {"pid": os.getpid(), "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def on_cluster(method: str, data: Path, scratch: Path, workers: int, memory_limit: str, evaluate_too: bool,
               sample_trips: int, epsilon: float, attacks: str) -> dict:
    """Fit, sample and evaluate ``method`` by partitions on a new LocalCluster (run by the parent)."""
    from distributed import Client, LocalCluster

    from locsynth.core.parallel import WORKER_ENV
    from locsynth.data.partitioned import PartitionedTraceSet
    from locsynth.synth import registry
    from locsynth.synth.partitioned import sample_partitioned

    train = PartitionedTraceSet.open(data / "train")
    out = {"method": method, "mode": "cluster", "trips": train.n_traces, "events": train.n_events,
           "partitions": train.n_partitions, "workers": workers, "memory_limit": memory_limit}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=memory_limit, env=WORKER_ENV) as cluster, Client(cluster) as client:
        before = client.run(_worker_state)
        model = registry.get(method)(epsilon=epsilon, seed=0)
        clock = time.perf_counter()
        model.fit(train, client=client)
        out["fit"] = time.perf_counter() - clock
        clock = time.perf_counter()
        release = sample_partitioned(model, scratch / "synthetic", partition_trips=int(train.sizes.max()), seed=1,
                                     client=client, overwrite=True)
        out["sample"] = time.perf_counter() - clock
        out["synthetic_trips"] = release.n_traces
        out["peak_driver_fit_sample_gb"] = peak_gb()
        if evaluate_too:
            from locsynth.evaluation.partitioned import evaluate_partitioned

            clock = time.perf_counter()
            report = evaluate_partitioned(train, PartitionedTraceSet.open(data / "test"), release,
                                          sample_trips=sample_trips, client=client, attacks=attacks)
            out["evaluate"] = time.perf_counter() - clock
            out["metrics"] = {k: v["synthetic"] for k, v in report.metrics.items()}
            out["by_partitions"] = report.meta.get("by_partitions")
        after = client.run(_worker_state)
    out["worker_peak_gb"] = sorted(round(s["peak_gb"], 3) for s in after.values())
    out["workers_restarted"] = sorted(s["pid"] for s in before.values()) != sorted(s["pid"] for s in after.values())
    out["peak_driver_gb"] = peak_gb()
    shutil.rmtree(scratch / "synthetic", ignore_errors=True)
    return out


def prepare_on_cluster(data: Path, workers: int, memory_limit: str) -> dict:
    """``prepare --format trips`` of the training trips written as GPS fixes (one Parquet file a
    partition, trips_scale_data.fixes_files), on a new LocalCluster: the same trips back."""
    from distributed import Client, LocalCluster

    from locsynth.core.parallel import WORKER_ENV
    from locsynth.data.partitioned import PartitionedTraceSet
    from locsynth.data.prepare_partitions import trips_from_files
    from trips_scale_data import fixes_files

    train = PartitionedTraceSet.open(data / "train")
    fixes = data / "fixes"
    if not fixes.is_dir():
        fixes_files(data / "train", fixes)
    out = {"method": "prepare", "mode": "cluster", "trips": train.n_traces, "events": train.n_events,
           "partitions": train.n_partitions, "workers": workers, "memory_limit": memory_limit, "sample": 0.0}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=memory_limit, env=WORKER_ENV) as cluster, Client(cluster) as client:
        before = client.run(_worker_state)
        clock = time.perf_counter()
        made = trips_from_files(fixes, data / "prepared", cell_m=float(train.info["cell_m"]), bbox=tuple(train.info["bbox"]),
                                timezone=train.time.timezone, partitions=train.n_partitions, client=client,
                                overwrite=True)[""]
        out["fit"] = time.perf_counter() - clock
        after = client.run(_worker_state)
    out.update({"prepared_trips": made.n_traces, "prepared_events": made.n_events,
                "worker_peak_gb": sorted(round(v["peak_gb"], 3) for v in after.values()),
                "workers_restarted": sorted(v["pid"] for v in before.values()) != sorted(v["pid"] for v in after.values()),
                "peak_driver_gb": peak_gb()})
    shutil.rmtree(data / "prepared", ignore_errors=True)
    return out


def in_one_process(method: str, data: Path, evaluate_too: bool, sample_trips: int, epsilon: float,
                   attacks: str, repeat: int) -> dict:
    """The fit of the whole set in memory, as bench_trips_scale.py runs it, for the spread of its results:
    each repeat samples from a seed of its own (the spread is the fit's noise and the sampling's)."""
    from locsynth.data.partitioned import PartitionedTraceSet
    from locsynth.data.traces import TraceSet
    from locsynth.synth import registry

    clock = time.perf_counter()
    train = TraceSet.load(data / "train")
    out = {"method": method, "mode": "single", "trips": train.n_traces, "load": time.perf_counter() - clock}
    model = registry.get(method)(epsilon=epsilon, seed=0)
    clock = time.perf_counter()
    model.fit(train)
    out["fit"] = time.perf_counter() - clock
    clock = time.perf_counter()
    synthetic = model.sample(seed=101 + repeat)
    out["sample"] = time.perf_counter() - clock
    out["peak_driver_fit_sample_gb"] = peak_gb()
    if evaluate_too:
        from locsynth.evaluation.partitioned import evaluate_partitioned

        del train
        clock = time.perf_counter()
        report = evaluate_partitioned(PartitionedTraceSet.open(data / "train"), PartitionedTraceSet.open(data / "test"),
                                      synthetic, sample_trips=sample_trips, attacks=attacks)
        out["evaluate"] = time.perf_counter() - clock
        out["metrics"] = {k: v["synthetic"] for k, v in report.metrics.items()}
    out["peak_driver_gb"] = peak_gb()
    return out


def table(rows: list[dict]) -> None:
    print(f"\n{'method':10} {'mode':7} {'trips':>11} {'fit s':>8} {'sample s':>9} {'fit+sample':>10} "
          f"{'evaluate s':>10} {'us/trip':>8} {'workers GB':>12} {'driver GB':>9} restarted")
    for r in sorted(rows, key=lambda r: (r["method"], r["mode"], r["trips"])):
        total = r["fit"] + r["sample"]
        print(f"{r['method']:10} {r['mode']:7} {r['trips']:>11,} {r['fit']:>8.1f} {r['sample']:>9.1f} {total:>10.1f} "
              f"{r.get('evaluate', float('nan')):>10.1f} {1e6 * total / r['trips']:>8.2f} "
              f"{'/'.join(f'{v:.2f}' for v in r.get('worker_peak_gb', [])):>12} {r['peak_driver_gb']:>9.2f} "
              f"{r.get('workers_restarted', '')}")
    for method in sorted({r["method"] for r in rows}):
        runs = sorted((r for r in rows if r["method"] == method and r["mode"] == "cluster"), key=lambda r: r["trips"])
        if len(runs) > 1:
            a, b = runs[0], runs[-1]
            growth = ((b["fit"] + b["sample"]) / b["trips"]) / ((a["fit"] + a["sample"]) / a["trips"])
            print(f"{method:10} time per trip {a['trips']:,} -> {b['trips']:,}: x{growth:.2f} "
                  f"(<= {LIMITS['per_trip_growth']}); fit+sample {b['fit'] + b['sample']:.0f} s "
                  f"(<= {LIMITS['fit_sample_s']:.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepared", type=Path, default=Path(tempfile.gettempdir()) / "cabs200")
    parser.add_argument("--scaled", type=Path, default=Path(tempfile.gettempdir()) / "locsynth-cluster")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000_000, 20_000_000])
    parser.add_argument("--partition-trips", type=int, default=250_000)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1.25GiB", help="each worker's")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--sample-trips", type=int, default=50_000, help="evaluate's uniform sample of each set")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="evaluate's attacks ('all': with the distance MIA)")
    parser.add_argument("--single", type=int, nargs="*", default=[], help="sizes also fitted in one process")
    parser.add_argument("--repeats", type=int, default=3, help="runs in one process a size, for the spread")
    parser.add_argument("--no-evaluate", action="store_true")
    parser.add_argument("--prepare", action="store_true", help="also prepare the training trips from GPS fixes")
    parser.add_argument("--timeout", type=float, default=7200.0, help="seconds a run may take")
    parser.add_argument("--results", type=Path, default=Path(tempfile.gettempdir()) / "trips-cluster.jsonl")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="cluster", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.path.insert(0, str(HERE))
        if args.one == "prepare":
            row = prepare_on_cluster(args.data, args.workers, args.memory_limit)
        elif args.mode == "cluster":
            row = on_cluster(args.one, args.data, args.data / f"scratch-{args.one}", args.workers, args.memory_limit,
                             not args.no_evaluate, args.sample_trips, args.epsilon, args.attacks)
        else:
            row = in_one_process(args.one, args.data, not args.no_evaluate, args.sample_trips, args.epsilon, args.attacks,
                                 args.repeat)
        print(json.dumps(row))
        return
    sys.path.insert(0, str(HERE))
    from trips_scale_data import scaled_partitioned

    methods = args.methods.split(",")
    done = [json.loads(line) for line in args.results.read_text().splitlines()] if args.results.is_file() else []
    have = {(r["method"], r["mode"], r["trips"], r.get("repeat", 0)) for r in done}
    for size in args.sizes:
        data = args.scaled / f"t{size}"
        scaled_partitioned(args.prepared, data, size, args.partition_trips)
        runs = [("cluster", 0)] + [("single", k) for k in range(args.repeats) if size in args.single]
        for method in (["prepare"] if args.prepare else []) + methods:
            for mode, repeat in runs[:1] if method == "prepare" else runs:
                if (method, mode, size, repeat) in have:
                    continue
                command = [sys.executable, __file__, "--one", method, "--mode", mode, "--data", str(data),
                           "--workers", str(args.workers), "--memory-limit", args.memory_limit,
                           "--sample-trips", str(args.sample_trips), "--epsilon", str(args.epsilon),
                           "--attacks", args.attacks, "--repeat", str(repeat)] + \
                    (["--no-evaluate"] if args.no_evaluate else [])
                try:
                    result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    print(f"{method} {mode} at {size:,}: over {args.timeout:g} s, stopped", file=sys.stderr)
                    continue
                if result.returncode:
                    print(f"{method} {mode} at {size:,} failed:\n{result.stderr[-3000:]}", file=sys.stderr)
                    continue
                row = {**json.loads(result.stdout.strip().splitlines()[-1]), "repeat": repeat,
                       "load_avg": os.getloadavg()[0]}
                print(f"{method} {mode} {size:,}: fit {row['fit']:.1f} s, sample {row['sample']:.1f} s, evaluate "
                      f"{row.get('evaluate', float('nan')):.1f} s, workers {row.get('worker_peak_gb')} GB, driver "
                      f"{row['peak_driver_gb']:.2f} GB", flush=True)
                with args.results.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                done.append(row)
    table([r for r in done if r["method"] in methods + ["prepare"] and r["trips"] in args.sizes])


if __name__ == "__main__":
    main()
