"""Realism before and after a public domain (issue 54, items 2 and 4), and whether a DP footprint
helps where there is none: each trip method at one epsilon, fitted ``--repeats`` times on the
cabs and on ships, evaluated against the test trips by the standard suite (``adatrace`` flavour)
and the realism group (metrics/realism.py). Prints one table per data set and writes every value to
``--out``/results.csv.

The domains, and why they are public:

- **cabs** (the 200 San Francisco cabs at 500 m, paper 004's box): the city's land, a polygon of
  the shoreline drawn by hand from a public map (some 200-400 m off; :data:`SF_LAND`), with Yerba
  Buena Island and the Bay Bridge's western span as a line widened by 250 m. No coastline file is
  at hand offline; a road network would be the better domain for cabs.
- **ships** (AIS, 3 January 2022, the Mississippi's mouth and New Orleans, 29.0-30.2 N,
  91-89 W, 1 km cells, one trip per vessel that leaves its cell): the water the day's *other*
  vessels show, those whose fixes never leave one cell (berths and anchorages, dropped from the
  trips by paper 004's rule): their fixes widened by 2 km. AIS is broadcast in the open and
  MarineCadastre publishes every day's, so another vessel's position is public knowledge of where
  ships float; no vessel of the training or test trips contributes to it. A buffer around the
  trips' own lanes would not be public; a nautical chart or a coastline file would be better, and
  none is at hand offline.

    python benchmarks/bench_realism.py [--data ../shared/data] [--out /tmp/realism] [--repeats 3]
        [--sets cabs,ships] [--methods ngram,privtrace,adatrace,dpt,ldptrace] [--footprint 0.05]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

#: San Francisco's land in paper 004's box, drawn by hand from a public map: (longitude, latitude)
#: around the peninsula from Pacifica up the ocean shore, along the Golden Gate and down the bay
SF_LAND = [(-122.500, 37.585), (-122.497, 37.610), (-122.495, 37.630), (-122.497, 37.667), (-122.498, 37.697),
           (-122.503, 37.713), (-122.507, 37.735), (-122.511, 37.769), (-122.514, 37.778), (-122.513, 37.781),
           (-122.505, 37.787), (-122.491, 37.788), (-122.484, 37.793), (-122.4775, 37.8085), (-122.463, 37.805),
           (-122.443, 37.807), (-122.431, 37.808), (-122.422, 37.8075), (-122.415, 37.809), (-122.410, 37.8105),
           (-122.403, 37.806), (-122.3934, 37.7956), (-122.389, 37.789), (-122.387, 37.780), (-122.385, 37.770),
           (-122.382, 37.760), (-122.379, 37.750), (-122.380, 37.741), (-122.375, 37.737), (-122.360, 37.728),
           (-122.365, 37.722), (-122.380, 37.717), (-122.377, 37.709), (-122.385, 37.707), (-122.393, 37.695),
           (-122.383, 37.674), (-122.378, 37.665), (-122.382, 37.655), (-122.392, 37.640), (-122.380, 37.635),
           (-122.357, 37.628), (-122.355, 37.613), (-122.370, 37.605), (-122.378, 37.598), (-122.370, 37.585)]
YERBA_BUENA = [(-122.372, 37.805), (-122.357, 37.805), (-122.357, 37.8125), (-122.372, 37.8125)]
BAY_BRIDGE = [(-122.389, 37.789), (-122.370, 37.806)]
#: the ships' box: the Mississippi's mouth and New Orleans (lat_min, lat_max, lon_min, lon_max)
SHIPS_BOX = (29.0, 30.2, -91.0, -89.0)
AIS = "ais-us-marinecadastre/ais_2022-01-03_first99999.csv.gz"
KEYS = ("query_error", "density_error", "trip_error", "length_error", "pattern_f1", "kendall_tau",
        "realism_far_cell", "realism_far_km", "realism_fast_steps", "realism_duration_factor", "realism_one_point")


def sf_domain():
    import geopandas as gpd
    from shapely.geometry import LineString, Polygon

    from locsynth.data.domain import as_domain

    land = gpd.GeoSeries([Polygon(SF_LAND), Polygon(YERBA_BUENA)], crs="EPSG:4326")
    bridge = as_domain(gpd.GeoSeries([LineString(BAY_BRIDGE)], crs="EPSG:4326"), 250.0)
    both = gpd.GeoSeries([land.union_all(), bridge.geometry], crs="EPSG:4326")
    return as_domain(both)


def cabs(data: Path, out: Path, domain: bool):
    from locsynth.data.prepare import prepare

    where = out / ("cabs-domain" if domain else "cabs")
    if not where.exists():
        prepare(data / "sf-cabspotting" / "cabs200", "cab-trips", where, cell_m=500, split=0.2,
                domain=sf_domain() if domain else None)
    return _load(where)


def ships_frame(data: Path) -> pd.DataFrame:
    ais = pd.read_csv(data / AIS)
    box = SHIPS_BOX
    return ais.loc[ais["LAT"].between(box[0], box[1]) & ais["LON"].between(box[2], box[3])]


def ships_domain(frame: pd.DataFrame, trip_ids):
    """The fixes of the vessels that are not among the trips, widened by 2 km (module docstring)."""
    import geopandas as gpd

    from locsynth.data.domain import as_domain

    other = frame.loc[~frame["MMSI"].astype(str).isin(set(trip_ids))]
    points = gpd.GeoSeries(gpd.points_from_xy(other["LON"], other["LAT"]), crs="EPSG:4326")
    return as_domain(points, 2000.0)


def ships(data: Path, out: Path, domain: bool):
    from locsynth.data.frames import trips_from_frame

    where = out / ("ships-domain" if domain else "ships")
    if not where.exists():
        frame = ships_frame(data)
        args = dict(trip="MMSI", time="BaseDateTime", lat="LAT", lon="LON", timezone="UTC", cell_m=1000,
                    bbox=SHIPS_BOX)
        plain = trips_from_frame(frame, **args)
        trips = plain if not domain else trips_from_frame(frame, **args,
                                                          domain=ships_domain(frame, plain.users["user_id"]))
        train, test = trips.split(0.2, seed=0)
        train.save(where / "train")
        test.save(where / "test")
    return _load(where)


def _load(where: Path):
    from locsynth.data.traces import TraceSet

    return TraceSet.load(where / "train"), TraceSet.load(where / "test")


def run(name: str, train, test, methods, epsilon: float, repeats: int, footprint: float) -> list[dict]:
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.synth import registry

    rows = []
    for method in [*methods, "training", "uniform"]:
        cls = registry.get(method)
        for r in range(repeats if method not in ("training", "uniform") else 1):
            params = {"epsilon": epsilon} if "epsilon" in cls.hyperparameters() else {}
            if footprint and "footprint_share" in cls.hyperparameters():
                params["footprint_share"] = footprint
            start = time.perf_counter()
            model = cls(**params).fit(train)
            synthetic = model.sample(seed=r)
            report = evaluate(train, test, synthetic, groups=["standard", "realism"])
            seconds = time.perf_counter() - start
            for key in KEYS:
                value = report.metrics.get(key, {}).get("synthetic")
                rows.append({"set": name, "method": method, "repeat": r, "metric": key, "value": value,
                             "seconds": seconds})
            print(f"{name} {method} #{r}: {seconds:.0f} s", file=sys.stderr, flush=True)
    return rows


def table(results: pd.DataFrame) -> str:
    summary = results.groupby(["set", "method", "metric"])["value"].agg(["mean", "std"]).reset_index()
    lines = []
    for name, part in summary.groupby("set", sort=False):
        lines += [f"\n{name}", "| method | " + " | ".join(KEYS) + " |", "|---" * (len(KEYS) + 1) + "|"]
        for method, rows in part.groupby("method", sort=False):
            cells = rows.set_index("metric").reindex(list(KEYS))
            lines.append(f"| {method} | " + " | ".join(
                "-" if pd.isna(m) else (f"{m:.3f}" if pd.isna(s) else f"{m:.3f} ± {s:.3f}")
                for m, s in zip(cells["mean"], cells["std"])) + " |")
    return "\n".join(lines)


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--out", type=Path, default=Path("/tmp/realism"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--sets", default="cabs,ships")
    parser.add_argument("--methods", default="ngram,privtrace,adatrace,dpt,ldptrace")
    parser.add_argument("--footprint", type=float, default=0.0, help="also fit with this footprint_share "
                        "(the DP footprint) on the sets without a domain")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    makers = {"cabs": cabs, "ships": ships}
    rows = []
    for name in args.sets.split(","):
        for domain in (False, True):
            train, test = makers[name](args.data, args.out, domain)
            label = f"{name} {'with its domain' if domain else 'without a domain'} ({train.n_traces} training trips)"
            rows += run(label, train, test, args.methods.split(","), args.epsilon, args.repeats, 0.0)
            if args.footprint and not domain:
                rows += run(f"{name}, DP footprint share {args.footprint:g}", train, test, args.methods.split(","),
                            args.epsilon, args.repeats, args.footprint)
            pd.DataFrame(rows).to_csv(args.out / "results.csv", index=False)
    print(table(pd.DataFrame(rows)))


if __name__ == "__main__":
    main()
