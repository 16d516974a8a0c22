"""Trips of several kinds of movement, each with its mode's public bounds (issue 54's acceptance).

For each dataset and each of NGRAM, PrivTrace, AdaTrace, DPT and LDPTrace at epsilon 1, ``--fits``
fits (3 by default), each sampled at the test set's size, against the real test trips:

- ``>bound``: the share of synthetic steps faster than the set's speed bound (at most 1 %);
- ``dur x``: the synthetic trips' median duration over the real ones' (within 1/1.5 .. 1.5);
- ``start``: the start-hour JSD in bits against the test trips', beside the uniform guess's
  (no worse than it);
- ``noise``: the estimated share of noise in what the release is drawn from (privacy/noise.py),
  and how many fits warned (``SmallDataWarning``).

The datasets (those whose files are absent are skipped):

- ``cabs``: the 200 San Francisco cabs' trips, mode taxi, 500 m cells, 20 % of the trips for test
  (as ``locsynth prepare --format cab-trips --cell-m 500 --split test=0.2``);
- ``ships-west``, ``ships-gulf``: the US AIS day (one trip a vessel, its MMSI; movingpandas'
  trajectory id), mode ship, the west coast and the Gulf of Mexico, 20 % for test;
- ``geolife-<mode>``: GeoLife's labelled trips (users 010 and 020, labels.txt) in Beijing's box,
  one trip a labelled segment; a handful of trips a mode, so the test set is the training set.

    python benchmarks/bench_modes.py --out modes.md            # the table in docs/data.md
    python benchmarks/bench_modes.py --datasets ships-west --methods ngram --fits 1
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
METHODS = ("ngram", "privtrace", "adatrace", "dpt", "ldptrace")
AIS = DATA / "ais-us-marinecadastre" / "ais_2022-01-03_first99999.csv.gz"
AIS_REGIONS = {"ships-west": ((30.0, 49.0, -126.0, -116.0), "America/Los_Angeles"),
               "ships-gulf": ((24.0, 31.0, -98.0, -80.0), "America/Chicago")}
GEOLIFE = DATA / "geolife" / "trackintel_subset"
#: GeoLife's labels -> locsynth's modes
LABELS = {"walk": "walk", "bike": "bike", "bus": "bus", "car": "car", "taxi": "taxi", "train": "train",
          "subway": "train"}
BEIJING = (39.7, 40.2, 116.1, 116.7)


def cabs(split: float = 0.2):
    from locsynth.data.prepare import prepare_trips

    sets = prepare_trips(DATA / "sf-cabspotting" / "cabs200", "cab-trips", 500.0, split=split, seed=0)
    return sets["train"], sets["test"]


def ships(region: str, split: float = 0.2):
    """The vessels of ``region`` as a movingpandas user makes them: a TrajectoryCollection by MMSI,
    trips_from_frame(collection, mode='ship')."""
    import movingpandas as mpd

    from locsynth import trips_from_frame

    box, zone = AIS_REGIONS[region]
    frame = pd.read_csv(AIS, usecols=["MMSI", "BaseDateTime", "LAT", "LON"])
    frame = frame.loc[frame["LAT"].between(box[0], box[1]) & frame["LON"].between(box[2], box[3])]
    frame["t"] = pd.to_datetime(frame["BaseDateTime"]).dt.tz_localize("UTC")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collection = mpd.TrajectoryCollection(frame, traj_id_col="MMSI", t="t", x="LON", y="LAT")
    trips = trips_from_frame(collection, mode="ship", bbox=box, timezone=zone)
    return trips.split(split, seed=0)


def geolife_frame() -> pd.DataFrame:
    """The fixes of GeoLife's labelled segments (users 010 and 020), ``segment`` and ``label`` each."""
    from locsynth.data.io.geolife import read_geolife

    points = pd.concat([read_geolife(GEOLIFE / f) for f in ("geolife_modes", "geolife_long_10_MB/010")])
    points = points.drop_duplicates(["user", "time", "lat", "lon"])
    rows = []
    for user in ("010", "020"):
        labels = pd.read_csv(GEOLIFE / "geolife_modes" / user / "labels.txt", sep="\t")
        labels.columns = ["start", "end", "label"]
        mine = points.loc[points["user"] == user]
        for k, (start, end, label) in enumerate(labels.itertuples(index=False)):
            start, end = pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC")
            part = mine.loc[mine["time"].between(start, end)]
            if len(part) > 1:
                rows.append(part.assign(segment=f"{user}-{k:04d}", label=label))
    return pd.concat(rows, ignore_index=True)


def geolife(mode: str):
    from locsynth import trips_from_frame

    frame = geolife_frame()
    frame = frame.loc[frame["label"].map(LABELS) == mode]
    trips = trips_from_frame(frame, trip="segment", user="user", mode=mode, bbox=BEIJING, timezone="Asia/Shanghai")
    return trips, trips                          # a handful of trips: no test set to spare


def datasets(names):
    out = {}
    for name in names:
        if name == "cabs" and (DATA / "sf-cabspotting" / "cabs200").is_dir():
            out[name] = cabs
        elif name in AIS_REGIONS and AIS.is_file():
            out[name] = lambda name=name: ships(name)
        elif name.startswith("geolife-") and GEOLIFE.is_dir():
            out[name] = lambda name=name: geolife(name.split("-", 1)[1])
    return out


def figures(synthetic, test) -> dict:
    from locsynth.metrics.trip_times import trip_times
    from locsynth.metrics.trips import HOURS, jensen_shannon

    bound = test.bounds.max_speed_kmh
    syn, real = trip_times(synthetic), trip_times(test)
    hours = lambda v: np.bincount(v["hour"], minlength=HOURS).astype(float)       # noqa: E731
    return {"fast": float((syn["kmh"] > bound * (1 + 1e-9)).mean()) if syn["kmh"].size else 0.0,
            "duration": float(np.median(syn["minutes"]) / max(np.median(real["minutes"]), 1e-9))
            if syn["minutes"].size else float("nan"),
            "start": jensen_shannon(hours(syn), hours(real)) if syn["hour"].size else float("nan"),
            "uniform": jensen_shannon(np.ones(HOURS), hours(real))}


def run(name: str, make, methods, fits: int, epsilon: float) -> list[dict]:
    import locsynth
    from locsynth.synth import registry

    train, test = make()
    rows = []
    for method in methods:
        kind = registry.get(method)
        got, warned, noise, seconds = [], 0, [], 0.0
        try:
            for _ in range(fits):
                start = time.perf_counter()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", locsynth.SmallDataWarning)
                    model = kind(epsilon=epsilon).fit(train)
                warned += any(issubclass(w.category, locsynth.SmallDataWarning) for w in caught)
                noise.append(model.noise_["share"] if model.noise_ else float("nan"))
                synthetic = model.sample(max(test.n_traces, 20), seed=len(got))
                seconds += time.perf_counter() - start
                got.append(figures(synthetic, test))
        except Exception as exc:            # a method that cannot run on the set says why; the others go on
            print(f"{name} {method}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            continue
        frame = pd.DataFrame(got)
        rows.append({"data": name, "mode": train.bounds.mode, "bound": train.bounds.max_speed_kmh,
                     "trips": train.n_traces, "method": method, "fast": frame["fast"].max(),
                     "dur_lo": frame["duration"].min(), "dur_hi": frame["duration"].max(),
                     "start": frame["start"].mean(), "start_sd": frame["start"].std(ddof=0),
                     "uniform": frame["uniform"].iloc[0], "noise": float(np.nanmean(noise)), "warned": warned,
                     "fits": fits, "seconds": seconds / fits})
        print(table(rows[-1:], header=False), flush=True)
    return rows


def table(rows, header: bool = True) -> str:
    lines = []
    if header:
        lines += ["| data | mode (bound) | train trips | method | >bound (max) | median duration x (min-max) | "
                  "start-hour JSD | uniform's | noise | warned |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ok_fast = "" if r["fast"] <= 0.01 else " ✗"
        ok_dur = "" if 1 / 1.5 <= r["dur_lo"] and r["dur_hi"] <= 1.5 else " ✗"
        ok_start = "" if r["start"] <= r["uniform"] else " ✗"
        lines.append(f"| {r['data']} | {r['mode']} ({r['bound']:g} km/h) | {r['trips']} | {r['method']} | "
                     f"{100 * r['fast']:.2f} %{ok_fast} | {r['dur_lo']:.2f}-{r['dur_hi']:.2f}{ok_dur} | "
                     f"{r['start']:.3f} ± {r['start_sd']:.3f}{ok_start} | {r['uniform']:.3f} | "
                     f"{100 * r['noise']:.0f} % | {r['warned']}/{r['fits']} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="cabs,ships-west,ships-gulf,geolife-walk,geolife-bike,geolife-bus,"
                                              "geolife-taxi,geolife-train")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--fits", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="also write the table (Markdown) here")
    args = parser.parse_args(argv)
    rows = []
    for name, make in datasets(args.datasets.split(",")).items():
        try:
            rows += run(name, make, args.methods.split(","), args.fits, args.epsilon)
        except Exception as exc:            # a dataset with no trip left says so and the rest go on
            print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    text = table(rows)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
