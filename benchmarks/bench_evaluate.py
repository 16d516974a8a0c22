"""How `evaluate` scales with users: time per phase at n/8, n/4, n/2 and n users (default n = 200,000).

A simulated city (24 hourly instants, 20 x 20 grid) is split in half into training and test
users; the synthetic set is another simulated city of the training size whose traces are
attributed to the training users (so both attacks run at full size). Prints each phase's
seconds and the ratio of time at one size to the size half as large (2.0 = linear).

    python benchmarks/bench_evaluate.py --users 200000

With ``--data``, the command a user waits for on a prepared trips dataset instead (issue 53):
``locsynth evaluate --train DATA/train --test DATA/test --synthetic SYN --out OUT``, every default
group, run by this checkout and by an earlier one (``--before``, the ``src`` folder of another
checkout, e.g. a worktree of the commit before) one after the other, ``--repeats`` times, each in a
fresh process; prints each run's wall seconds and each group's, the medians and their ratio (after
/ before), and whether the two metrics.json hold equal values for every metric both computed (to
the last digit); "kept" is this checkout again with the real sets' references read from the user's
cache (a second evaluation against the same split). The synthetic set is an NGRAM release at
epsilon 1 of the test set's size (``--synthetic`` to give one).

    python benchmarks/bench_evaluate.py --data cabs200 --before /path/to/before/src --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


HERE = Path(__file__).resolve().parents[1] / "src"


def command(src: Path, data: Path, synthetic: Path, out: Path, cache: str = "off") -> tuple[float, float, dict]:
    """Wall and CPU seconds of ``locsynth evaluate`` run by the code in ``src`` (with the user's cache
    of references ``cache``: a folder, or off), and its metrics.json."""
    env = {**os.environ, "PYTHONPATH": str(src), "LOCSYNTH_CACHE": cache}
    run_it = [sys.executable, "-c", "from locsynth.cli import main; main()", "--quiet", "evaluate", "--train",
              str(data / "train"), "--test", str(data / "test"), "--synthetic", str(synthetic), "--out", str(out)]
    start, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(run_it, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{src}: locsynth evaluate failed:\n{done.stderr[-3000:]}")
    wall, now = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    return wall, cpu, json.loads((out / "metrics.json").read_text())


def equal(before: dict, after: dict) -> list[str]:
    """The metrics both computed whose values differ (every column, to the last digit)."""
    return [key for key in before if not key.startswith("_") and key in after and before[key] != after[key]]


def against(data: Path, before: Path, synthetic: Path | None, repeats: int) -> None:
    """The command on ``data`` by ``before`` and by this checkout (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if synthetic is None:
            from locsynth import TraceSet
            from locsynth.synth.ngram import NGRAM

            test = TraceSet.load(data / "test")
            model = NGRAM(epsilon=1.0).fit(TraceSet.load(data / "train"))
            synthetic = model.sample(test.n_traces, seed=0).save(tmp / "syn")
        # after: every evaluation computes its references; kept: the second and later evaluation
        # against the same split, which reads them from the user's cache (evaluation/references.py)
        codes = {"before": (before, "off"), "after": (HERE, "off"), "kept": (HERE, str(tmp / "cache"))}
        for name, (src, cache) in codes.items():                        # warm-up: numba's caches, the disk's
            command(src, data, synthetic, tmp / f"warm-{name}", cache)
        walls: dict = {name: [] for name in codes}
        cpus: dict = {name: [] for name in codes}
        groups: dict = {name: [] for name in codes}
        for r in range(repeats):
            for name, (src, cache) in codes.items():
                wall, cpu, metrics = command(src, data, synthetic, tmp / f"{name}-{r}", cache)
                walls[name].append(wall)
                cpus[name].append(cpu)
                groups[name].append(metrics["_meta"]["seconds"])
                print(f"run {r} {name:6}: {wall:6.1f} s ({cpu:.1f} s CPU, load {os.getloadavg()[0]:.1f})  " +
                      " ".join(f"{g} {v:.2f}" for g, v in metrics["_meta"]["seconds"].items()), flush=True)
        first = {name: json.loads((tmp / f"{name}-0" / "metrics.json").read_text()) for name in codes}
        differ = sorted(set(equal(first["before"], first["after"])) | set(equal(first["before"], first["kept"])))
        median = {name: float(np.median(v)) for name, v in walls.items()}
        cpu = {name: float(np.median(v)) for name, v in cpus.items()}
        for name in ("after", "kept"):
            print(f"median wall: before {median['before']:.1f} s, {name} {median[name]:.1f} s, {name} / before "
                  f"{median[name] / median['before']:.2f}; CPU {cpu['before']:.1f} s, {cpu[name]:.1f} s, "
                  f"{cpu[name] / cpu['before']:.2f}")
        for name in codes:
            keys = sorted({g for run in groups[name] for g in run})
            print(f"{name:6} median per group: " + ", ".join(
                f"{g} {np.median([run.get(g, np.nan) for run in groups[name]]):.2f}" for g in keys))
        new = sorted(k for k in first["after"] if not k.startswith("_") and k not in first["before"])
        print(f"metrics equal in both: {'yes' if not differ else 'NO: ' + ', '.join(differ)} "
              f"({sum(1 for k in first['before'] if not k.startswith('_') and k in first['after'])} metrics; "
              f"new: {', '.join(new) or 'none'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200_000)
    parser.add_argument("--data", type=Path, default=None, help="a prepared trips dataset (train/ and test/)")
    parser.add_argument("--before", type=Path, default=None, help="the src folder of the code to compare with")
    parser.add_argument("--synthetic", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.data is not None:
        against(args.data, args.before or HERE, args.synthetic, args.repeats)
        return
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
