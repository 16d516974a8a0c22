"""Porto-sized trip sets made from the 200 cabs' prepared trips (issue 39).

The Porto taxi set of the PrivTrace and LDPTrace papers holds about 1.7 million trips; it is not on
these machines. ``scaled(prepared, out, factor)`` writes, from a directory ``locsynth prepare
--format cab-trips`` wrote (``train/`` and ``test/``), a directory of the same format whose two
parts each hold ``factor`` times as many trips as the training part (so that ``evaluate`` compares
a Porto-sized synthetic set with a Porto-sized real one, issue 39):

- every trip of the new set is one of the part's trips drawn uniformly with replacement (whole
  trips: their cells, instants and hour);
- each is moved by a random whole number of cells along each axis, (dr, dc) uniform in
  [-3, 3]^2 among the moves that keep the whole trip inside the grid (the format's public box), so
  a trip keeps its shape, length and adjacency;
- a trip whose move is (0, 0) (drawn, or the only one that fits) is re-timed instead: moved by a
  whole number of hours, uniform in {-3..-1, 1..3} (made later where it would start before
  the axis), its ``hour`` moved by as much, mod 24;
- ``user_id`` is the source trip's id with the copy's number (``abboip-00085-x12``), ``cab`` is kept
  (a cab drives 24 times as many trips, as Porto's 442 taxis drive 1.7 million).

At 24 times the cabs: 1,739,208 training trips (72,467 x 24, 13.2 million events) and 1,739,232
test trips (18,117 x 96). Seeded (``seed``, default 0): the same set on every run. Written to a scratch
directory (``/tmp/locsynth-trips-scale/x24`` by default), never into the repository.

    python benchmarks/trips_scale_data.py /tmp/cabs200 --factors 4 12 24 [--out /tmp/locsynth-trips-scale]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from locsynth.data.traces import TraceSet

#: moves of up to this many cells along each axis
MAX_MOVE = 3
#: re-timing by up to this many hours
MAX_HOURS = 3
PORTO_TRIPS = 1_700_000


def scaled_part(trips: TraceSet, factor: int, seed: int, size: int | None = None, first: int = 0,
                stream: tuple = ()) -> TraceSet:
    """``factor`` times as many trips as ``trips`` (module docstring), or ``size`` trips numbered from
    ``first`` (a partition: ``stream`` its own random stream), same space and time axis."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=stream or (39, factor, trips.n_traces)))
    grid = trips.space
    rows, cols = grid.rows, grid.cols
    n = trips.n_traces
    m = n * factor if size is None else int(size)
    off = trips.offsets
    r, c = np.divmod(trips.loc.astype(np.int64), cols)
    # the room each trip has to move in, along each axis
    rmin, rmax = np.minimum.reduceat(r, off[:-1]), np.maximum.reduceat(r, off[:-1])
    cmin, cmax = np.minimum.reduceat(c, off[:-1]), np.maximum.reduceat(c, off[:-1])
    source = rng.integers(0, n, m)

    def move(lo, hi, size):
        low, high = np.maximum(-MAX_MOVE, -lo), np.minimum(MAX_MOVE, size - 1 - hi)   # inclusive bounds
        return low + np.floor(rng.random(low.size) * (high - low + 1)).astype(np.int64)

    dr = move(rmin[source], rmax[source], rows)
    dc = move(cmin[source], cmax[source], cols)
    still = (dr == 0) & (dc == 0)
    first_t = trips.t[off[:-1]][source]
    hours = rng.integers(1, MAX_HOURS + 1, m) * np.where(rng.random(m) < 0.5, -1, 1)
    per_hour = int(round(3600 / trips.time.instant.total_seconds()))
    hours = np.where(first_t + hours * per_hour < 0, np.abs(hours), hours)
    dt = np.where(still, hours * per_hour, 0)
    length = np.diff(off)[source]
    new_off = np.concatenate([[0], np.cumsum(length)])
    # the events of every copy: its source's events, moved
    event_src = np.repeat(off[:-1][source] - new_off[:-1], length) + np.arange(new_off[-1])
    copy = np.repeat(np.arange(m), length)
    loc = (r[event_src] + dr[copy]) * cols + c[event_src] + dc[copy]
    t = trips.t[event_src] + dt[copy]
    users = trips.users.iloc[source].reset_index(drop=True)
    users["user_id"] = users["user_id"].astype(str).to_numpy(dtype=object) + \
        pd.Series(np.arange(first, first + m)).map("-x{}".format).to_numpy(dtype=object)
    if "hour" in users:
        shift = np.where(still, hours, 0)
        users["hour"] = ((users["hour"].to_numpy(np.int64) + shift) % 24).astype(np.int8)
    info = {**trips.info, "scaled": {"factor": factor, "seed": seed, "source_trips": n,
                                      "made_by": "benchmarks/trips_scale_data.py"}}
    return TraceSet(copy.astype(np.int32), t, loc.astype(np.int32), users, trips.space, trips.time, info)


def scaled(prepared: Path, out: Path, factor: int, seed: int = 0, overwrite: bool = False) -> Path:
    """``out`` with ``train/`` and ``test/``, each ``factor`` times the prepared training part's trips
    (module docstring)."""
    out = Path(out)
    for part in ("train", "test"):
        if (out / part / "meta.json").is_file() and not overwrite:
            continue
        src = TraceSet.load(Path(prepared) / part)
        if part == "test":
            n_train = TraceSet.load(Path(prepared) / "train").n_traces
            times = max(1, int(round(factor * n_train / src.n_traces)))
        else:
            times = factor
        big = scaled_part(src, times, seed)
        big.check()
        big.save(out / part, overwrite=True)
    return out


def scaled_partitioned(prepared: Path, out: Path, trips: int, partition_trips: int = 500_000, seed: int = 0,
                       test_trips: int | None = None, overwrite: bool = False) -> Path:
    """``out`` with ``train/`` and ``test/`` as partitioned sets (data/partitioned.py) of ``trips``
    trips (``test_trips`` for the test part, as many by default), made as :func:`scaled` makes them,
    partition by partition (partition i from its own stream of ``seed``): no process holds a part whole."""
    from locsynth.data.partitioned import PartitionedWriter

    out = Path(out)
    for part, total in (("train", trips), ("test", test_trips or trips)):
        if (out / part / "meta.json").is_file() and not overwrite:
            continue
        src = TraceSet.load(Path(prepared) / ("train" if part == "train" else "test"))
        info = {**src.info, "scaled": {"trips": total, "seed": seed, "source_trips": src.n_traces,
                                       "made_by": "benchmarks/trips_scale_data.py"}}
        with PartitionedWriter(out / part, src.space, src.time, info, True, src.ledger) as writer:
            for i, first in enumerate(range(0, total, partition_trips)):
                size = min(partition_trips, total - first)
                writer.append(scaled_part(src, 0, seed, size, first, stream=(56, part == "test", i)))
    return out


def fixes_files(trips_path: Path, out: Path, seed: int = 0) -> Path:
    """The trips of a partitioned set as GPS fixes, one Parquet file a partition (``traj_id``, UTC
    ``time``, ``lat``, ``lon``: each point at its cell's centre moved by up to a tenth of a cell), the
    input of ``prepare --format trips``."""
    from locsynth.data.partitioned import PartitionedTraceSet

    parts = PartitionedTraceSet.open(trips_path)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lat_step = (parts.space.bbox[1] - parts.space.bbox[0]) / parts.space.rows
    lon_step = (parts.space.bbox[3] - parts.space.bbox[2]) / parts.space.cols
    for i in range(parts.n_partitions):
        ts = parts.partition(i)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(5656, i)))
        jitter = (rng.random((2, ts.n_events)) - 0.5) * 0.2
        pd.DataFrame({"traj_id": ts.users["user_id"].to_numpy()[ts.user],
                      "time": ts.time.start_of(ts.t).tz_convert("UTC"),
                      "lat": np.asarray(ts.space.lat)[ts.loc] + jitter[0] * lat_step,
                      "lon": np.asarray(ts.space.lon)[ts.loc] + jitter[1] * lon_step}).to_parquet(out / f"fixes-{i:05d}.parquet")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prepared", type=Path, help="a directory locsynth prepare --format cab-trips wrote")
    parser.add_argument("--factors", type=int, nargs="+", default=[4, 12, 24])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "locsynth-trips-scale")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--trips", type=int, default=None, help="partitioned sets of this many trips instead")
    parser.add_argument("--partition-trips", type=int, default=500_000)
    args = parser.parse_args()
    if args.trips:
        start = time.perf_counter()
        where = scaled_partitioned(args.prepared, args.out, args.trips, args.partition_trips, args.seed,
                                   overwrite=args.overwrite)
        print(f"{where}: {args.trips:,} trips a part ({time.perf_counter() - start:.1f} s)")
        return
    for factor in args.factors:
        start = time.perf_counter()
        where = scaled(args.prepared, args.out / f"x{factor}", factor, args.seed, args.overwrite)
        train = TraceSet.load(where / "train")
        print(f"x{factor}: {where}: {train.n_traces:,} training trips, {train.n_events:,} events "
              f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
