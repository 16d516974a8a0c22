"""``locsynth prepare``, ``info``, ``export`` and ``simulate``: data in, a TraceSet out, and what
a set, a model or a release holds. Parsing and printing only; the work is in locsynth.data and
locsynth.release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ..core.errors import InputError
from .common import (SCHEDULER_HELP, WORKERS_HELP, _claim, console, declared_command, progress_bar, reports_errors, say,
                     spinner)
from .root import app


def _formats_help() -> str:
    from ..data.prepare import TRIP_FORMATS, formats

    return ("Input format: " + ", ".join(f"{f} (trips)" if f in TRIP_FORMATS else f for f in formats())
            + f", {BY_PARTITIONS} (GPS fixes in Parquet or CSV files, a folder or a glob, made into trips by "
              f"partitions: a partitioned set).")


#: the format of files of fixes larger than memory, made into trips by partitions (data/prepare_partitions.py)
BY_PARTITIONS = "trips"


@app.command(cls=declared_command(helps={"format": _formats_help}))
@reports_errors
def prepare(
    input: Path = typer.Argument(..., help="Input file or folder."),
    format: str = typer.Option(..., "--format", "-f", help="Input format (the list: locsynth prepare --help)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output TraceSet directory (DIR/train and DIR/test when split)."),
    grid: Optional[str] = typer.Option(None, help="Regular grid ROWSxCOLS, e.g. 20x20."),
    cell_m: Optional[float] = typer.Option(None, "--cell-m", help="cab-trips: square cells of this many metres "
                                           "(paper 004: 250 or 500; default 250, or the --mode's)."),
    mode: Optional[str] = typer.Option(None, help="Trip formats: the movement's public bounds (walk, bike, car, bus, "
                                       "train, ship, taxi; speeds, cell, instant): trips faster than its speed "
                                       "bound are dropped, no synthetic step exceeds it. Default: the taxi's."),
    max_speed_kmh: Optional[float] = typer.Option(None, "--max-speed-kmh", help="Trip formats: the speed bound, "
                                                  "km/h (instead of the --mode's)."),
    min_speed_kmh: Optional[float] = typer.Option(None, "--min-speed-kmh", help="Trip formats: the slowest "
                                                  "speed, km/h (instead of the --mode's)."),
    bbox: Optional[str] = typer.Option(None, help="Bounding box LAT_MIN,LAT_MAX,LON_MIN,LON_MAX."),
    domain: Optional[Path] = typer.Option(None, help="Trip formats: a file GeoPandas reads (GeoPackage, "
                                          "GeoJSON, shapefile ...) of polygons or lines, public knowledge of where "
                                          "the movement can be (a waterway, a road network): the grid covers its box "
                                          "and only its cells, and no method places a location outside them."),
    domain_buffer: float = typer.Option(0.0, "--domain-buffer", help="--domain: widen its geometry by this many "
                                        "metres first (lines: GPS error, a road's width)."),
    pois: Optional[int] = typer.Option(None, help="Keep the N most visited POIs (paper 001 keeps 1000)."),
    dp_epsilon: Optional[float] = typer.Option(None, "--dp-epsilon", help="Choose the --pois under DP (a noisy "
                                               "top-k of visitors, this epsilon per user, recorded in the ledger), "
                                               "among --candidates, or among the cells of --grid over --bbox; "
                                               "otherwise among candidates from the data, which the ledger notes "
                                               "as not covered."),
    candidates: Optional[Path] = typer.Option(None, help="--dp-epsilon: a public list of candidate venues you vouch "
                                              "for (CSV venue,lat,lon), that depends on no training user."),
    start: Optional[str] = typer.Option(None, help="First day of the time axis, YYYY-MM-DD (public; default: "
                                                   "the earliest record's date, taken from the data)."),
    instant: Optional[str] = typer.Option(None, help="Instant length, rounding down: 1h, 30min, 20min (default 1h; "
                                          "trip formats: the --mode's, one minute for the cabs)."),
    slot: Optional[str] = typer.Option(None, help="Slot length, cycling each day (default 2h)."),
    window: Optional[str] = typer.Option(None, help="Daily window START-END, e.g. 08:00-18:00."),
    timezone: Optional[str] = typer.Option(None, help="Timezone of naive timestamps and of days (default UTC); "
                                            "auto: each point's own zone from its coordinates (local slots)."),
    time_shift: Optional[str] = typer.Option(None, "--time-shift", help="Hours to add to every time as read, "
                                             "before time zones (e.g. 8 or -3.5). Default: the format's correction, "
                                             "+8 for foursquare-global and gowalla (their files are 8 h early), 0 "
                                             "otherwise; 0 reads the times as stated."),
    split: Optional[str] = typer.Option(None, help="Hold out users: test=FRACTION."),
    like: Optional[Path] = typer.Option(None, help="Use this TraceSet's space and time axis."),
    duplicates: str = typer.Option("first", help="Several events of a user in one instant: first, last, keep, error."),
    fold_days: Optional[bool] = typer.Option(None, "--fold-days/--no-fold-days",
                                             help="Keep only the instant of the day: a trace is one nominal day (PF's default)."),
    pois_file: Optional[Path] = typer.Option(None, help="POI coordinates file (foursquare-global, gowalla)."),
    friends: Optional[Path] = typer.Option(None, help="Friendship edge list (user user per line), e.g. Gowalla's."),
    user_col: Optional[str] = typer.Option(None, help="csv/parquet: user column (default uid)."),
    time_col: Optional[str] = typer.Option(None, help="csv/parquet: time column (default datetime)."),
    lat_col: Optional[str] = typer.Option(None, help="csv/parquet: latitude column (default: the first of lat, latitude in the file)."),
    lon_col: Optional[str] = typer.Option(None, help="csv/parquet: longitude column (default: the first of lng, lon, longitude in the file)."),
    venue_col: Optional[str] = typer.Option(None, help="csv/parquet: venue id column."),
    time_unit: Optional[str] = typer.Option(None, help="csv/parquet: numeric times are unix 's' or 'ms'."),
    seed: int = typer.Option(0, help="Seed of the train/test split."),
    partitions: Optional[int] = typer.Option(None, metavar="N", help=f"{BY_PARTITIONS}: partitions of the set "
                                             "written (default: one per input file)."),
    workers: Optional[int] = typer.Option(None, metavar="N", help=f"{BY_PARTITIONS}: " + WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help=f"{BY_PARTITIONS}: " + SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Read raw points, validate and discretize them into a TraceSet."""
    from ..data import prepare as prep
    from ..data.timeaxis import describe_hours

    if format == BY_PARTITIONS:
        return _prepare_partitions(input, out, cell_m, bbox, timezone, split, seed, partitions, workers, scheduler,
                                   overwrite, {"user": user_col, "time": time_col, "lat": lat_col, "lon": lon_col,
                                               "time_unit": time_unit, "mode": mode, "max_speed_kmh": max_speed_kmh,
                                               "min_speed_kmh": min_speed_kmh, "instant": instant, "domain": domain})
    if partitions is not None or workers is not None or scheduler is not None:
        raise InputError(f"--partitions, --workers and --scheduler go with --format {BY_PARTITIONS}")

    reader_options = {k: v for k, v in {
        "pois_file": pois_file, "user_col": user_col, "time_col": time_col, "lat_col": lat_col,
        "lon_col": lon_col, "venue_col": venue_col, "time_unit": time_unit}.items() if v is not None}
    _claim(out, overwrite=overwrite, inputs=[input, like, friends, pois_file])
    with spinner(f"preparing {input} ({format})"):
        sets = prep.prepare(
            input, format, out, grid=prep.parse_grid(grid) if grid else None,
            bbox=prep.parse_bbox(bbox) if bbox else None, pois=pois, instant=instant, slot=slot,
            window=prep.parse_window(window) if window else None, timezone=timezone,
            split=prep.parse_split(split) if split else None, like=like, duplicates=duplicates,
            seed=seed, overwrite=overwrite, reader_options=reader_options, friends=friends,
            fold_days=fold_days, cell_m=cell_m, dp_epsilon=dp_epsilon, start=start, time_shift=time_shift,
            candidates=candidates, mode=mode, max_speed_kmh=max_speed_kmh, min_speed_kmh=min_speed_kmh,
            domain=domain, domain_buffer_m=domain_buffer)
    _say_prepared(sets, out)


def _say_prepared(sets: dict, out: Path) -> None:
    """What prepare wrote: each set's sizes, hours and trips, and the frame they share."""
    from ..data.timeaxis import describe_hours

    for name, ts in sets.items():
        s = ts.summary()
        where = out / name if name else out
        say(f"wrote {where}: {s['users']} users, {s['traces']} traces, {s['events']} events, "
            f"{s['locations']} locations, {s['instants']} instants/day, {s['slots']} slots")
        clock = "each point's local time" if ts.info.get("timezones") else ts.time.timezone
        say(f"  hour of day ({clock}): {describe_hours(ts.time.hour_profile(ts.t))}")
        if "trips" in ts.info:
            from ..metrics.trips import trip_statistics

            t = trip_statistics(ts)
            say(f"  trips (paper 004 Table 1): {t['trips']} trips, {t['cells']} cells visited, length mean "
                f"{t['length_mean']:.2f}, sd {t['length_sd']:.2f}, max {t['length_max']}")
    first = next(iter(sets.values()))
    if "trips" in first.info:
        from ..data.trips import describe_drops

        say("trips made: " + "; ".join(describe_drops(first.info["trips"])))
        say(f"bounds: {first.bounds.describe()}")
    zones = first.info.get("timezones")
    if zones:
        listed = ", ".join(f"{z} {n}" for z, n in list(zones.items())[:6])
        say(f"time zones (points per zone, --timezone auto): {listed}"
            + (f" and {len(zones) - 6} more" if len(zones) > 6 else ""))
    for part, text in first.info.get("frame", {}).items():
        say(f"{part}: {text}")
    for line in (first.ledger.describe() if first.ledger else []):
        say(f"privacy: {line}")


def _prepare_partitions(input: Path, out: Path, cell_m, bbox, timezone, split, seed, partitions, workers, scheduler,
                        overwrite: bool, columns: dict) -> None:
    """``prepare --format trips``: files of fixes made into a partitioned set of trips."""
    from ..core.parallel import executor
    from ..data import prepare as prep
    from ..data.prepare_partitions import trips_from_files

    _claim(out, overwrite=overwrite, inputs=[input])
    with executor(workers, scheduler) as client, spinner(f"preparing {input} ({BY_PARTITIONS}, by partitions)"):
        sets = trips_from_files(input, out, split=prep.parse_split(split) if split else None, seed=seed,
                                partitions=partitions, client=client, overwrite=overwrite, cell_m=cell_m,
                                bbox=prep.parse_bbox(bbox) if bbox else None, timezone=timezone, **columns)
    for name, parts in sets.items():
        say(f"wrote {out / name if name else out}: {parts.n_traces} trips, {parts.n_events} events in "
            f"{parts.n_partitions} partitions, {parts.space.n_locations} locations")
    first = next(iter(sets.values()))
    from ..data.trips import describe_drops

    say("trips made: " + "; ".join(describe_drops(first.info["trips"])))
    for line in (first.ledger.describe() if first.ledger else []):
        say(f"privacy: {line}")


@app.command()
@reports_errors
def info(
    directory: Path = typer.Argument(..., help="A TraceSet, model or release directory."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object."),
):
    """What a TraceSet, a fitted model or a release holds, with its privacy ledger."""
    from ..release.info import describe

    facts = describe(directory)
    if as_json:
        typer.echo(json.dumps(facts, indent=2, default=str))
        return
    from rich.table import Table

    table = Table(title=f"{directory} ({facts['kind']})", show_header=False)
    for key, value in facts.items():
        if key in ("kind", "ledger"):
            continue
        table.add_row(key, json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value))
    console().print(table)
    for line in facts.get("ledger", {}).get("summary", ["no privacy ledger (real data)"]):
        say(f"privacy: {line}")


@app.command()
@reports_errors
def export(
    directory: Path = typer.Argument(..., help="A TraceSet directory."),
    out: Path = typer.Option(..., "--out", "-o", help="CSV file to write."),
    format: str = typer.Option("points", "--format", help="points: user_id,datetime (with its offset),lat,lon,"
                               "location_id; skmob: uid,tid,datetime (naive, local),lat,lng, as scikit-mobility "
                               "and the DP mobility report read it (a trip set: the cab or person as uid, the trip "
                               "as tid)."),
    clock: Optional[str] = typer.Option(None, "--clock", help="offset: ISO 8601 times with their offset (points' "
                                        "default); naive-local: local wall-clock times without one, which the DP "
                                        "mobility report's temporal analyses need (skmob's only clock)."),
    internal: bool = typer.Option(False, "--internal", help="A synthetic set's internal view: the training users' "
                                  "ids and the source column (the default is the public one, s0, s1, ...)."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Write a TraceSet as CSV, the ids to_frame() gives (a synthetic set's s0, s1, ...; --internal: its source)."""
    from ..data.export import CLOCKS, FORMATS
    from ..data.traces import TraceSet

    if format not in FORMATS:
        raise InputError(f"unknown --format {format!r}; the formats: {', '.join(FORMATS)}")
    if clock is not None and clock not in CLOCKS:
        raise InputError(f"unknown --clock {clock!r}; the clocks: {', '.join(CLOCKS)}")
    _claim(out, overwrite=overwrite, inputs=[directory], directory=False)
    ts = TraceSet.load(directory)
    ts.to_csv(out, overwrite=overwrite, internal=internal, format=format, clock=clock)
    say(f"wrote {out}: {ts.n_events} events")
    if ts.synthetic and internal:
        say("note: this set names the training users its traces came from (user_id, source): it is for "
            "internal use; locsynth release makes a set that can be published")


@app.command()
@reports_errors
def simulate(
    users: int = typer.Option(..., help="Number of simulated users."),
    out: Path = typer.Option(..., "--out", "-o", help="Output TraceSet directory."),
    days: int = typer.Option(1, help="Days per user."),
    grid: Optional[str] = typer.Option(None, help="Grid ROWSxCOLS (default 20x20)."),
    pois: Optional[int] = typer.Option(None, help="Simulate N POIs instead of a grid."),
    instant: str = typer.Option("1h", help="Instant length."),
    slot: str = typer.Option("2h", help="Slot length."),
    checkin_rate: Optional[float] = typer.Option(None, help="Keep events at about this rate (check-in-like sparsity)."),
    seed: int = typer.Option(0, help="Random seed."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Simulate a city (EPR mobility with home/work routines); the output says it is simulated."""
    from ..data import simulate as sim
    from ..data.prepare import parse_grid

    _claim(out, overwrite=overwrite)
    space = sim.make_space(grid=parse_grid(grid) if grid else None, pois=pois, seed=seed)
    with progress_bar() as bar:
        task = bar.add_task("simulating", total=users)
        sim.simulate_to_dir(out, users, days=days, space=space, instant=instant, slot=slot,
                            checkin_rate=checkin_rate, seed=seed, overwrite=overwrite,
                            progress=lambda done, total: bar.update(task, completed=done))
    say(f"wrote {out}: {users} simulated users")
