"""to_movingpandas on 10,000 trips: locsynth's collection (the first trajectory built by
movingpandas, the rest sharing its attributes) against movingpandas' own constructor on the same
points, in one run (issue 54: 19 s before, against 0.2 s to sample the trips).

    python benchmarks/bench_export.py                      # the cabs' test trips, prepared here
    python benchmarks/bench_export.py --trips 10000 --set /tmp/cabs200/test
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trips", type=int, default=10_000)
    parser.add_argument("--set", type=Path, default=None, help="a prepared TraceSet of trips (default: the cabs')")
    args = parser.parse_args(argv)
    import movingpandas as mpd

    from locsynth import TraceSet
    from locsynth.data.export import geodataframe
    from locsynth.data.prepare import prepare_trips

    trips = TraceSet.load(args.set) if args.set else \
        prepare_trips(DATA / "sf-cabspotting" / "cabs200", "cab-trips", 500.0, split=0.2, seed=0)["test"]
    trips = trips.select_users(np.arange(min(args.trips, trips.n_traces)))
    start = time.perf_counter()
    fast = trips.to_movingpandas()
    new = time.perf_counter() - start
    start = time.perf_counter()
    gdf = geodataframe(trips, "points")
    gdf = gdf.loc[(np.diff(trips.offsets) > 1)[trips.user]]
    gdf = gdf.assign(t=gdf["datetime"].dt.tz_localize(None)).drop(columns="datetime")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = mpd.TrajectoryCollection(gdf.rename(columns={"user_id": "traj_id"}).set_index("t"), traj_id_col="traj_id")
    old = time.perf_counter() - start
    assert len(fast) == len(slow)
    print(f"{len(fast)} trajectories: to_movingpandas {new:.2f} s, movingpandas' constructor {old:.2f} s, "
          f"ratio {old / new:.1f}")


if __name__ == "__main__":
    main()
