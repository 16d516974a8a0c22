"""Trips from files of GPS fixes larger than memory, as a partitioned set (issue 56; DESIGN.md, Scale).

The fixes (a folder, a glob or a list of Parquet or CSV files) are read lazily by dask.dataframe
and shuffled by a key so that no trip spans two partitions: the trip column where there is one
(movingpandas' ``traj_id``, ...: :data:`locsynth.data.frames.TRIP_NAMES`), else the person column,
whose fixes are then cut into trips inside their partition (by a ``marked`` column, or at stays and
gaps, as :func:`locsynth.data.frames.trips_from_frame` cuts them). Each partition is made into trips
exactly as that function makes a frame's (paper 004 §8.2's steps), on the one grid of the whole
set: over ``bbox``, or over the fixes' own box found first by one pass of minima and maxima (which
the ledger notes, as for a frame), and written where it was made (data/partitioned.py). A ``mode``
(data/modes.py) and the bounds given one by one are every partition's, as for a frame (the grid's
cell and the axis's instant the bounds'); a public ``domain`` is not taken here yet (prepare the
set from one file, or without one).

The time axis starts, as a frame's, on the date of the earliest trip of the whole set: each
partition is written on its own first date, and those that start later are moved onto the set's
axis afterwards (their instants shifted by whole days). With ``split`` the trips are held out by a
hash of (``seed``, the trip's id): each trip is in the test part with probability ``split``,
whatever the partitions (not the seeded permutation of the whole that a set in memory uses).
"""

from __future__ import annotations

import glob
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..core import parallel
from ..core.errors import InputError
from ..core.files import atomic_output
from .frames import TRIP_NAMES, TRIP_PRESETS, _found, columns, trips_from_frame
from .partitioned import PartitionedTraceSet, PartitionedWriter, partition_name, write_partition
from .modes import mode_bounds
from .timeaxis import TimeAxis, single_zone
from .traces import TraceSet
from .trips import trip_grid

#: a ``split`` puts a trip in the test part when its hash, scaled to [0, 1), falls below the fraction
HASH_SCALE = 2.0 ** 64


def files_of(paths) -> list[str]:
    """The Parquet or CSV files of ``paths``: a folder (every ``*.parquet`` or ``*.csv`` in it), a
    glob, a file, or a list of them; one clear error when there is none or they mix kinds."""
    found: list[str] = []
    for item in [paths] if isinstance(paths, (str, Path)) else list(paths):
        item = Path(item)
        if item.is_dir():
            found += sorted(str(p) for p in item.iterdir() if p.suffix in (".parquet", ".csv"))
        else:
            found += sorted(glob.glob(str(item))) or ([str(item)] if item.is_file() else [])
    kinds = {Path(f).suffix for f in found}
    if not found:
        raise InputError(f"no Parquet or CSV file of fixes in {paths}")
    if len(kinds) > 1 or not kinds <= {".parquet", ".csv"}:
        raise InputError(f"the fixes must be all Parquet or all CSV files, got {', '.join(sorted(kinds))}")
    return found


def read_fixes(paths):
    """The fixes of ``paths`` (:func:`files_of`) as a dask DataFrame, read when computed."""
    import dask.dataframe as dd

    files = files_of(paths)
    return dd.read_parquet(files) if files[0].endswith(".parquet") else dd.read_csv(files)


def trips_from_files(paths, out: str | Path, *, split: float | None = None, seed: int = 0, partitions: int | None = None,
                     client=None, overwrite: bool = False, **options) -> dict[str, PartitionedTraceSet]:
    """Trips of the fixes in ``paths`` written to ``out`` as a partitioned set of ``partitions``
    parts (the files' count by default), or, with ``split`` (the test fraction), ``out/train`` and
    ``out/test`` (module docstring). ``options`` are :func:`trips_from_frame`'s (``trip``,
    ``marked``, ``user``, the columns, ``preset``, ``cell_m``, ``bbox``, ``timezone`` ...);
    ``client`` makes the partitions on its cluster. Returns the sets written, by name."""
    ddf = read_fixes(paths)
    key, box, options = _plan(ddf, options, client)
    names = ["train", "test"] if split is not None else [""]
    if split is not None and not 0 < split < 1:
        raise InputError(f"`split` is the test fraction, between 0 and 1; got {split!r}")
    n = int(partitions or ddf.npartitions)
    # without a client, a shuffle of tasks: dask picks p2p, which needs workers, wherever a client was made before
    method = None if client is not None else "tasks"
    parts = (ddf.shuffle(on=key, npartitions=n, shuffle_method=method) if n > 1 else ddf.repartition(npartitions=1)).to_delayed()
    with _outputs(Path(out), names, trip_grid(options["cell_m"], box), overwrite, paths) as writers:
        folders = {name: str(w.tmp) for name, w in writers.items()}
        made = _made(parts, client, folders, options, split, seed)
        if not any(m["written"] for m in made):
            raise InputError(f"no trip was made of the fixes in {paths} (paper 004 §8.2's steps dropped them all)")
        first = min(date.fromisoformat(m["start"]) for m in made if m["written"])
        frame = _frame(made, first, box, options)
        _rebase(made, folders, first, frame.time.instants_per_day, client)
        for name, writer in writers.items():
            writer.time, writer.info, writer.ledger = frame.time, frame.info, frame.ledger
            for m in made:
                if name in m["written"]:
                    writer.add(m["written"][name])
    return {name: PartitionedTraceSet.open(Path(out) / name) for name in names}


def _plan(ddf, options: dict, client) -> tuple[str, tuple, dict]:
    """(the shuffle's key column, the grid's box, the options every partition is made with): the
    box and the time zone found once for the whole set where the caller gives none."""
    meta = ddf._meta
    settings = {**TRIP_PRESETS.get(options.get("preset"), {}), **{k: v for k, v in options.items() if v is not None}}
    if settings.get("domain") is not None:
        raise InputError("a public domain is not taken by partitions yet: prepare the set from one file "
                         "(prepare --format csv/parquet, trips_from_frame) or without --domain")
    # the grid's cell and the axis's instant: the mode's bounds' (the taxi's without one), as a frame's
    bounds = mode_bounds(settings.get("mode"), **{k: settings[k] for k in ("max_speed_kmh", "min_speed_kmh", "cell_m",
                                                                            "instant") if k in settings})
    trip = _found(meta, options.get("trip"), TRIP_NAMES, "trip")
    person = columns(meta.drop(columns=[trip]) if trip else meta, user=options.get("user"))["user"]
    key = trip if trip is not None else person
    if key is None:
        raise InputError(f"the fixes have no trip or person column to keep a trip in one partition; their columns: "
                         f"{', '.join(map(str, meta.columns))} (give `trip` or `user`)")
    box = settings.get("bbox")
    if box is None:
        where = columns(meta, lat=options.get("lat"), lon=options.get("lon"))
        lo, hi = _extent(ddf[[where["lat"], where["lon"]]], client)
        box = (float(lo[0]), max(float(hi[0]), float(lo[0]) + 1e-6), float(lo[1]), max(float(hi[1]), float(lo[1]) + 1e-6))
        settings["box_from_data"] = True
    if settings.get("timezone") is None:
        settings["timezone"] = single_zone(np.array([box[0], box[1]]), np.array([box[2], box[3]]))
    settings.setdefault("cell_m", bounds.cell_m)
    return key, tuple(box), {**settings, "bbox": tuple(box), "axis_instant": bounds.instant}


def _extent(frame, client) -> tuple[np.ndarray, np.ndarray]:
    """The minima and maxima of the columns of a dask frame (one pass)."""
    import dask

    lo, hi = frame.min(), frame.max()
    lo, hi = (client.compute([lo, hi], sync=True) if client is not None else dask.compute(lo, hi))
    return np.asarray(lo, np.float64), np.asarray(hi, np.float64)


@contextmanager
def _outputs(out: Path, names: list, space, overwrite: bool, inputs):
    """The set's writer at ``out`` (``names`` ['']), or a writer of each part inside ``out``, written
    whole or not at all (as prepare writes ``out/train`` and ``out/test``)."""
    if names == [""]:
        with PartitionedWriter(out, space, None, None, overwrite, inputs=_paths(inputs)) as writer:
            yield {"": writer}
        return
    with atomic_output(out, overwrite, directory=True, inputs=_paths(inputs)) as tmp, \
            PartitionedWriter(tmp / names[0], space, None, mine=True) as a, \
            PartitionedWriter(tmp / names[1], space, None, mine=True) as b:
        yield {names[0]: a, names[1]: b}


def _paths(inputs) -> list:
    """The input paths (none for a glob, which names no file to protect)."""
    items = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    return [Path(p) for p in items if Path(p).exists()]


def _made(parts: list, client, folders: dict, options: dict, split, seed: int) -> list[dict]:
    """Every partition made into trips and written (where ``client`` runs the work)."""
    from dask import delayed

    tasks = [delayed(make_partition)(part, i, folders, options, split, seed) for i, part in enumerate(parts)]
    if client is not None:
        return client.gather(client.compute(tasks))
    import dask

    return list(dask.compute(*tasks, scheduler="synchronous"))


def make_partition(frame: pd.DataFrame, i: int, folders: dict, options: dict, split, seed: int) -> dict:
    """One partition of fixes made into trips (:func:`trips_from_frame`, on the set's grid) and
    written to each of ``folders`` ('' or 'train' and 'test'); what the set's writer needs of it."""
    settings = {k: v for k, v in options.items() if k not in ("box_from_data", "axis_instant")}
    if len(frame) == 0:
        return {"written": {}, "start": None, "info": None}
    try:
        trips = trips_from_frame(frame, **settings)
    except InputError as error:                 # no trip in this partition: nothing to write
        if "no trip" not in str(error):
            raise
        return {"written": {}, "start": None, "info": None}
    pieces = {"": trips} if split is None else dict(zip(("train", "test"), held_out(trips, split, seed)))
    written = {name: write_partition(folders[name], partition_name(i), ts) for name, ts in pieces.items()
               if ts.n_traces}
    return {"written": written, "start": trips.time.start_date.isoformat(), "info": trips.info}


def held_out(trips: TraceSet, split: float, seed: int) -> tuple[TraceSet, TraceSet]:
    """(train, test): a trip is in the test part when the hash of (``seed``, its id) says so, with
    probability ``split`` (module docstring)."""
    ids = trips.users["user_id"].astype(str).to_numpy(dtype=object)
    u = pd.util.hash_array(ids, hash_key=f"{int(seed) % 10**16:016d}").astype(np.float64) / HASH_SCALE
    test = u < split
    return trips.select_users(np.flatnonzero(~test)), trips.select_users(np.flatnonzero(test))


def _rebase(made: list[dict], folders: dict, first: date, instants_per_day: int, client) -> None:
    """Every partition written on a later first date moved onto the set's axis (from ``first``; the
    axis is on the wall clock, so a day is ``instants_per_day`` instants whatever the date)."""
    jobs = [(str(Path(folders[name]) / m["written"][name]["name"]), (date.fromisoformat(m["start"]) - first).days)
            for m in made if m["written"] for name in m["written"]]
    parallel.map_chunks(client, shift_days, [job for job in jobs if job[1] > 0], instants_per_day)


def shift_days(job: tuple, instants_per_day: int) -> None:
    """Rewrite a partition's events ``job[1]`` days later on its axis (``job[0]``: its folder)."""
    folder, days = job
    events = pq.read_table(Path(folder) / "events.parquet")
    at = events.schema.get_field_index("t")
    moved = pa.array(events["t"].to_numpy() + np.int64(days) * instants_per_day, pa.int64())
    pq.write_table(events.set_column(at, "t", moved), Path(folder) / "events.parquet")


def _frame(made: list[dict], first: date, box: tuple, options: dict) -> TraceSet:
    """A TraceSet of no trips carrying the set's frame: its time axis from ``first``, its info
    (paper 004's drops summed over the partitions) and ledger, as :func:`trips_from_frame` records them."""
    from .prepare import framed_trips

    infos = [m["info"] for m in made if m["info"] is not None]
    steps = {k: sum(int(info["trips"].get(k, 0)) for info in infos) for k in infos[0]["trips"]}
    info = {**infos[0], "trips": steps, "input": "files of fixes", "partitioned": "by the trips' or persons' ids"}
    if options.get("box_from_data"):
        info["bbox_from_data"] = True
    axis = TimeAxis.build(first, options["timezone"], options["axis_instant"], "1h")
    empty = TraceSet(np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int32),
                     pd.DataFrame({"user_id": []}), trip_grid(options["cell_m"], box), axis, info)
    return framed_trips(empty, "the given box" if not options.get("box_from_data") else "the box of the data")
