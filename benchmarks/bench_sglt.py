"""SGLT on PF and Foursquare NYC: the library calls and the commands a user runs, in one run.

- PF (500 training users, 400 cells, 30 instants), c = 100: fit (profiles, all pairs, graph,
  classes) and 10 passing fakes per seed, per pair of users and per fake; the fit's ratio to
  scipy's Hungarian assignments alone, one call per pair (what fit did before its compiled loop);
  the same through ``locsynth fit sglt`` and ``locsynth sample``; against the authors' tool as
  the PPMTF authors timed it (paper 001 Fig. 9: 0.47 h to train on 100 PF users, 47 h on 1000).
- Growth: fit on 100, 250 and 500 PF users, and on 250, 500 and all 884 Foursquare NYC users
  (1000 POIs, hourly instants; sparse check-ins, so most instants are filled by Gibbs sampling),
  with the ratio of times against the ratio of pairs.
- Scale (``--scale 2500,5000,10000``): instead of the above, fit on that many users drawn with
  replacement from PF's training users (``--source pf``: at most 30 locations a user) or from
  Foursquare NYC's (``fsq``: a median of 57 locations a user after filling, up to 400), with
  the time a pair of users takes and the peak resident memory.

    python benchmarks/bench_sglt.py [--data ../shared/data] [--scale N,N,... [--source pf|fsq]]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

from locsynth.data.prepare import prepare
from locsynth.synth.sglt import SGLT
from locsynth.synth.sglt.mobility import day_traces, fill_missing, period_of, visit_profiles

TOOL_HOURS_100_USERS = 0.47


def assignment_floor(model: SGLT, train) -> float:
    """Seconds of linear_sum_assignment alone on every pair's support matrix (built beforehand)."""
    days = fill_missing(day_traces(train), train.space, seed=model.seed)
    prof, _ = visit_profiles(days.locs, days.owner, train.n_traces, period_of(train.time.instants_per_day, 1),
                             train.space.n_locations, 1)
    rows = [prof.data[prof.indptr[i]:prof.indptr[i + 1]] for i in range(train.n_traces)]
    total = 0.0
    for u in range(len(rows)):
        mats = [np.minimum.outer(rows[u], rows[v]) for v in range(u + 1, len(rows))]
        t0 = time.perf_counter()
        for w in mats:
            linear_sum_assignment(w, maximize=True)
        total += time.perf_counter() - t0
    return total


def timed_fit(train, **params) -> tuple[SGLT, float]:
    t0 = time.perf_counter()
    model = SGLT(**params).fit(train)
    return model, time.perf_counter() - t0


def run(cmd: list[str]) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def scale(data: Path, tmp: Path, sizes: list[int], source: str) -> None:
    """Fit time against users drawn with replacement from a real set (see the module docstring)."""
    import resource

    if source == "pf":
        base = prepare(data / "ppmtf-pf-tokyo", "pf", tmp / "pf")["train"]
    else:
        (base,) = prepare(data / "foursquare-nyc-tsmc2014", "foursquare", tmp / "fsq").values()
    SGLT(clusters=5).fit(base.select_users(np.arange(30)))                       # numba caches
    rng = np.random.default_rng(0)
    print(f"{'source':<6} {'users':>6} {'fit s':>8} {'us/pair':>8} {'x time':>7} {'x pairs':>8} {'peak GB':>8}")
    prev = None
    for n in sizes:
        train = base.select_users(rng.integers(0, base.n_traces, n))
        sec = timed_fit(train, clusters=20)[1]
        pairs = n * (n - 1) / 2
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        ratio = "" if prev is None else f"{sec / prev[1]:>7.2f} {pairs / prev[2]:>8.2f}"
        print(f"{source:<6} {n:>6} {sec:>8.1f} {sec / pairs * 1e6:>8.2f} {ratio:>16} {peak:>8.1f}", flush=True)
        prev = (n, sec, pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    parser.add_argument("--scale", default="", help="comma-separated numbers of users (see above)")
    parser.add_argument("--source", choices=("pf", "fsq"), default="pf")
    args = parser.parse_args()
    data = Path(args.data)
    if args.scale:
        with tempfile.TemporaryDirectory() as tmp:
            scale(data, Path(tmp), [int(x) for x in args.scale.split(",")], args.source)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        pf = prepare(data / "ppmtf-pf-tokyo", "pf", tmp / "pf")
        train = pf["train"]
        SGLT(clusters=5).fit(train.select_users(np.arange(30))).sample(traces_per_user=2)   # numba caches

        model, t_fit = timed_fit(train, clusters=100)
        t0 = time.perf_counter()
        fakes = model.sample(traces_per_user=10, seed=1)
        t_sample = time.perf_counter() - t0
        info = fakes.info["fakes"]
        pairs = model.summary()["pairs"]
        floor = assignment_floor(model, train)
        print(f"PF, 500 users, c = 100: fit {t_fit:.2f} s ({t_fit / pairs * 1e6:.1f} us a pair of users; "
              f"{t_fit / floor:.2f} x the {floor:.2f} s of scipy's assignments alone); "
              f"10 fakes per seed {t_sample:.2f} s ({t_sample / info['passed'] * 1e3:.3f} ms a passing fake, "
              f"{t_sample / info['tries'] * 1e3:.3f} ms a try, pass rate {info['pass_rate']:.3f}); "
              f"fit + sample {t_fit + t_sample:.1f} s of the 600 s budget")

        exe = [str(Path(sys.executable).parent / "locsynth")]
        t_cli_fit = run(exe + ["fit", "sglt", str(tmp / "pf" / "train"), "--clusters", "100", "--out", str(tmp / "m")])
        t_cli_sample = run(exe + ["sample", str(tmp / "m"), "--traces-per-user", "10", "--out", str(tmp / "s")])
        print(f"commands: locsynth fit sglt {t_cli_fit:.2f} s ({t_cli_fit / t_fit:.2f} x the library call), "
              f"locsynth sample {t_cli_sample:.2f} s ({t_cli_sample / t_sample:.2f} x)")

        growth = []
        for n in (100, 250, 500):
            growth.append(("PF", n, timed_fit(train.select_users(np.arange(n)), clusters=50)[1]))
        tool_s = TOOL_HOURS_100_USERS * 3600
        print(f"PF 100 users: {growth[0][2]:.2f} s, the authors' tool 0.47 h: {tool_s / growth[0][2]:.0f} x faster")
        fsq_dir = data / "foursquare-nyc-tsmc2014"
        if fsq_dir.is_dir():
            (fsq,) = prepare(fsq_dir, "foursquare", tmp / "fsq").values()
            filled = day_traces(fsq).missing
            for n in (250, 500, fsq.n_traces):
                growth.append(("Foursquare NYC", n, timed_fit(fsq.select_users(np.arange(n)), clusters=50)[1]))
            print(f"Foursquare NYC: {fsq.n_traces} users, {filled} missing instants filled")
        print(f"{'data':<16} {'users':>6} {'fit s':>7} {'x time':>7} {'x pairs':>8}")
        prev = None
        for name, n, sec in growth:
            ratio = "" if prev is None or prev[0] != name else f"{sec / prev[2]:>7.2f} {n * (n - 1) / (prev[1] * (prev[1] - 1)):>8.2f}"
            print(f"{name:<16} {n:>6} {sec:>7.2f} {ratio}")
            prev = (name, n, sec)


if __name__ == "__main__":
    main()
