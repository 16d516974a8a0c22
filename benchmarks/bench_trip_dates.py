"""The trips' dates, durations and clock (issue 55): each trip method fitted ``--repeats`` times at
one epsilon on a prepared set of trips, sampled at the test set's size, read from ``to_frame()``
and compared with the test trips, with the training trips as the reference:

- **unseen dates**: the share of trips starting on a date on which no training trip starts;
- **date TVD**: the total variation distance between the start dates and the test trips';
- **over an hour**: the share of trips longer than an hour (first to last point);
- **weekday error**: the largest difference, in points, between a weekday's share of starts and
  the test trips'; **weekend**: the share of trips starting on a Saturday or Sunday;
- the trip-times group (start-hour and duration JSD, bits) and the median step speed (km/h);
- the standard suite (``adatrace`` flavour): query, density, trip, length and diameter errors,
  pattern F1.

Prints one table (mean ± sd over the repeats, and each LDPTrace fit's hour JSD and weekday error)
and writes every value to ``--out``/results.csv::

    python benchmarks/bench_trip_dates.py --data /work/cache/cabs200 [--repeats 3]
        [--methods ngram,privtrace,adatrace,dpt,ldptrace] [--ldptrace-repeats 5] [--out /tmp/dates]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

SPATIAL = ("query_error", "density_error", "trip_error", "length_error", "diameter_error", "pattern_f1")
TIMES = ("trip_start_hour_jsd", "trip_duration_jsd", "trip_speed_jsd")
KEYS = ("unseen_dates", "date_tvd", "over_hour", "weekday_error", "weekend", "median_kmh") + TIMES + SPATIAL


def starts(ts) -> pd.DataFrame:
    """Each trip's first point's local date and its duration in minutes, from ``to_frame()``."""
    frame = ts.to_frame()
    by = frame.groupby("user_id", sort=False)["datetime"]
    first, last = by.min(), by.max()
    return pd.DataFrame({"date": first.dt.tz_localize(None).dt.normalize(),
                         "minutes": (last - first).dt.total_seconds() / 60.0})


def shares(values: pd.Series) -> pd.Series:
    return values.value_counts(normalize=True)


def date_figures(syn: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame) -> dict:
    seen = set(train["date"])
    a, b = shares(syn["date"]), shares(test["date"])
    tvd = 0.5 * a.sub(b, fill_value=0.0).abs().sum()
    wa = shares(syn["date"].dt.dayofweek).reindex(range(7), fill_value=0.0)
    wb = shares(test["date"].dt.dayofweek).reindex(range(7), fill_value=0.0)
    return {"unseen_dates": float((~syn["date"].isin(seen)).mean()), "date_tvd": float(tvd),
            "over_hour": float((syn["minutes"] > 60).mean()), "weekday_error": float(100 * (wa - wb).abs().max()),
            "weekend": float(wa[[5, 6]].sum()), "weekdays": (100 * wa).round(1).tolist()}


def measure(train, test, synthetic, figures_train, figures_test, references) -> dict:
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.metrics.trip_times import trip_times

    out = date_figures(starts(synthetic), figures_train, figures_test)
    report = evaluate(train, test, synthetic, groups=["standard", "trip_times"], references=references)
    for key in TIMES + SPATIAL:
        out[key] = report.metrics.get(key, {}).get("synthetic")
    out["median_kmh"] = float(np.median(trip_times(synthetic)["kmh"]))
    return out


def run(train, test, methods, epsilon: float, repeats: int, ldp_repeats: int) -> list[dict]:
    from locsynth.synth import registry

    real_train, real_test = starts(train), starts(test)
    references: dict = {}
    rows = [{"method": "training", "repeat": 0, **measure(train, test, train, real_train, real_test, references)}]
    for method in methods:
        cls = registry.get(method)
        for r in range(ldp_repeats if method == "ldptrace" else repeats):
            began = time.perf_counter()
            model = cls(epsilon=epsilon, seed=r).fit(train)
            synthetic = model.sample(test.n_traces, seed=r)
            rows.append({"method": method, "repeat": r, **measure(train, test, synthetic, real_train, real_test,
                                                                   references),
                         "seconds": time.perf_counter() - began})
            print(f"{method} #{r}: {rows[-1]['seconds']:.0f} s, weekdays {rows[-1]['weekdays']}", file=sys.stderr,
                  flush=True)
    return rows


def table(results: pd.DataFrame) -> str:
    lines = ["| method | " + " | ".join(KEYS) + " |", "|---" * (len(KEYS) + 1) + "|"]
    for method, rows in results.groupby("method", sort=False):
        cells = []
        for key in KEYS:
            v = rows[key].astype(float)
            cells.append(f"{v.mean():.4f}" if len(v) == 1 else f"{v.mean():.4f} ± {v.std():.4f}")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    ldp = results.loc[results["method"] == "ldptrace"]
    if len(ldp):
        lines.append("\nLDPTrace per fit: start-hour JSD " + ", ".join(f"{v:.4f}" for v in ldp["trip_start_hour_jsd"])
                     + "; weekday error " + ", ".join(f"{v:.1f}" for v in ldp["weekday_error"]) + " points")
    return "\n".join(lines)


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a prepared set of trips (train/ and test/)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/dates"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ldptrace-repeats", type=int, default=5)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--methods", default="ngram,privtrace,adatrace,dpt,ldptrace")
    args = parser.parse_args()
    from locsynth.data.traces import TraceSet

    args.out.mkdir(parents=True, exist_ok=True)
    train, test = TraceSet.load(args.data / "train"), TraceSet.load(args.data / "test")
    rows = run(train, test, args.methods.split(","), args.epsilon, args.repeats, args.ldptrace_repeats)
    results = pd.DataFrame(rows)
    results.to_csv(args.out / "results.csv", index=False)
    print(table(results))


if __name__ == "__main__":
    main()
