"""The ``locsynth`` command: argument parsing and progress display only (DESIGN.md).

Each command imports what it uses when it runs, so ``locsynth --help`` loads typer alone and a
command pays only for its own imports (benchmarks/bench_cli.py measures this).
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..core.errors import InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Synthesize privacy-preserving location traces and measure their utility and privacy.")
WORKERS_HELP = "Run the per-user work on a local Dask cluster of N single-threaded worker processes."
SCHEDULER_HELP = "Run the per-user work on the running Dask cluster at this scheduler address (tcp://HOST:PORT)."


@app.callback()
def _options(quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or progress lines.")):
    """Synthesize privacy-preserving location traces and measure their utility and privacy."""
    from . import common as cli_common

    cli_common.QUIET = quiet


PARAMS = {"allow_extra_args": True, "ignore_unknown_options": True}


from .common import (console, _refuse_existing, as_flags, declared_command, given_options,  # noqa: E402
                         on_bar, on_spinner, progress_bar, reports_errors, say, spinner, typer_params)


def _table(title: str, columns: list[str], rows: list[list[str]], compact: bool = False,
           groups: list[str] | None = None):
    """Print a table laid out by evaluation/report/terminal.py."""
    from ..evaluation.report.terminal import TerminalTable

    console().print(TerminalTable(title, columns, rows, compact, groups).rich())


def _fmt(value, digits: int = 4) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


# -- hyperparameters from a method's signature ---------------------------------------------------
def _declared(options: dict) -> dict[str, inspect.Parameter]:
    """A method's declared fit or sample options (name -> (default, help[, type])) as parameters."""
    out = {}
    for name, spec in options.items():
        default, annotation = spec[0], (spec[2].__name__ if len(spec) > 2 else inspect.Parameter.empty)
        out[name] = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
    return out


def _method_args(kind, extra: list[str], pairs: list[str], options: dict | None = None,
                 what: str = "hyperparameter") -> tuple[dict, dict]:
    """(hyperparameters, options): the given --NAME VALUE split between the constructor's
    parameters and the step's declared ``options`` (a method's fit_options or sample_options);
    with ``what`` = "sample option" only the options are accepted."""
    declared = _declared(options or {})
    accepted = declared if what != "hyperparameter" else {**kind.hyperparameters(), **declared}
    given = _hyperparameters(kind, extra, pairs, accepted, what)
    return ({k: v for k, v in given.items() if k not in declared}, {k: v for k, v in given.items() if k in declared})


def _hyperparameters(kind, extra: list[str], pairs: list[str], accepted=None, what: str = "hyperparameter") -> dict:
    """``--name value``, ``--name=value``, ``--flag`` / ``--no-flag`` and ``--param name=value``
    for the constructor parameters of ``kind`` (or ``accepted``), converted to the type of their
    defaults."""
    accepted = kind.hyperparameters() if accepted is None else accepted
    aliases = getattr(kind, "cli_aliases", {})

    def key(name: str) -> str:
        return aliases.get(name, name.replace("-", "_"))

    given: list[tuple[str, str]] = []
    i = 0
    while i < len(extra):
        token = extra[i]
        if not token.startswith("--"):
            raise InputError(f"unexpected argument {token!r}")
        name, eq, value = token[2:].partition("=")
        if not eq:
            if key(name) in accepted and _is_bool(accepted[key(name)]):
                value = "true"
            elif name.startswith("no-") and key(name[3:]) in accepted:
                name, value = name[3:], "false"
            elif i + 1 < len(extra) and not extra[i + 1].startswith("--"):
                i += 1
                value = extra[i]
            elif key(name) in accepted:
                raise InputError(f"--{name} needs a value")
        given.append((name, value))
        i += 1
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq:
            raise InputError(f"--param {pair!r} is not NAME=VALUE")
        given.append((name, value))
    params = {}
    for name, value in given:
        if key(name) not in accepted:
            listed = ", ".join("--" + p.replace("_", "-") for p in accepted) or "none"
            raise InputError(f"{kind.name} has no {what} --{name}; its {what}s: {listed}")
        params[key(name)] = _convert(kind, name, value, accepted[key(name)])
    return params


def _is_bool(param: inspect.Parameter) -> bool:
    return isinstance(param.default, bool) or param.annotation in (bool, "bool")


def _convert(kind, name: str, text: str, param: inspect.Parameter):
    """One value read as every spelling reads it (validation.parse_value, the declared check for a
    hyperparameter); the library's error names the parameter, this one its flag."""
    from ..core.validation import parse_value

    hyper = kind.declarations().get(param.name)
    annotation = str(param.annotation)
    like = param.default if param.default not in (None, inspect.Parameter.empty) else (
        0 if annotation.startswith("int") else 0.0 if annotation.startswith("float") else "")
    try:
        if hyper is not None:
            return hyper.parse(text)
        value = parse_value(text, like)
        if isinstance(like, bool) and not isinstance(value, bool):
            raise InputError(f"{param.name} must be true or false, got {text!r}")
        if isinstance(like, (int, float)) and (isinstance(value, str) or isinstance(like, int) and
                                               not float(value).is_integer()):
            raise InputError(f"{param.name} must be {'a whole number' if isinstance(like, int) else 'a number'}, "
                             f"got {text!r}")
        return value
    except InputError as exc:
        raise InputError(as_flag(str(exc), param.name, f"--{name}") + f" ({kind.name})") from None


def as_flag(message: str, parameter: str, flag: str) -> str:
    """A library error that names ``parameter`` (at its start) naming the command-line ``flag`` instead."""
    return flag + message[len(parameter):] if message.startswith(parameter + " ") else message


# -- commands ---------------------------------------------------------------------------------------
def _formats_help() -> str:
    from ..data.prepare import TRIP_FORMATS, formats

    return "Input format: " + ", ".join(f"{f} (trips)" if f in TRIP_FORMATS else f for f in formats()) + "."


@app.command(cls=declared_command(helps={"format": _formats_help}))
@reports_errors
def prepare(
    input: Path = typer.Argument(..., help="Input file or folder."),
    format: str = typer.Option(..., "--format", "-f", help="Input format (the list: locsynth prepare --help)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output TraceSet directory (DIR/train and DIR/test when split)."),
    grid: Optional[str] = typer.Option(None, help="Regular grid ROWSxCOLS, e.g. 20x20."),
    cell_m: Optional[float] = typer.Option(None, "--cell-m", help="cab-trips: square cells of this many metres "
                                           "(paper 004: 250 or 500; default 250)."),
    bbox: Optional[str] = typer.Option(None, help="Bounding box LAT_MIN,LAT_MAX,LON_MIN,LON_MAX."),
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
    instant: Optional[str] = typer.Option(None, help="Instant length, rounding down: 1h, 30min, 20min (default 1h)."),
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
    lat_col: Optional[str] = typer.Option(None, help="csv/parquet: latitude column (default lat)."),
    lon_col: Optional[str] = typer.Option(None, help="csv/parquet: longitude column (default lng)."),
    venue_col: Optional[str] = typer.Option(None, help="csv/parquet: venue id column."),
    time_unit: Optional[str] = typer.Option(None, help="csv/parquet: numeric times are unix 's' or 'ms'."),
    seed: int = typer.Option(0, help="Seed of the train/test split."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Read raw points, validate and discretize them into a TraceSet."""
    from ..data import prepare as prep
    from ..data.timeaxis import describe_hours

    reader_options = {k: v for k, v in {
        "pois_file": pois_file, "user_col": user_col, "time_col": time_col, "lat_col": lat_col,
        "lon_col": lon_col, "venue_col": venue_col, "time_unit": time_unit}.items() if v is not None}
    with spinner(f"preparing {input} ({format})"):
        sets = prep.prepare(
            input, format, out, grid=prep.parse_grid(grid) if grid else None,
            bbox=prep.parse_bbox(bbox) if bbox else None, pois=pois, instant=instant, slot=slot,
            window=prep.parse_window(window) if window else None, timezone=timezone,
            split=prep.parse_split(split) if split else None, like=like, duplicates=duplicates,
            seed=seed, overwrite=overwrite, reader_options=reader_options, friends=friends,
            fold_days=fold_days, cell_m=cell_m, dp_epsilon=dp_epsilon, start=start, time_shift=time_shift,
            candidates=candidates)
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
    zones = first.info.get("timezones")
    if zones:
        listed = ", ".join(f"{z} {n}" for z, n in list(zones.items())[:6])
        say(f"time zones (points per zone, --timezone auto): {listed}"
            + (f" and {len(zones) - 6} more" if len(zones) > 6 else ""))
    for part, text in first.info.get("frame", {}).items():
        say(f"{part}: {text}")
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
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Write a TraceSet as CSV: user_id,datetime,lat,lon,location_id (internal: see release)."""
    from ..data.traces import TraceSet

    ts = TraceSet.load(directory)
    ts.to_csv(out, overwrite=overwrite)
    say(f"wrote {out}: {ts.n_events} events")
    if ts.synthetic:
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

    space = sim.make_space(grid=parse_grid(grid) if grid else None, pois=pois, seed=seed)
    with progress_bar() as bar:
        task = bar.add_task("simulating", total=users)
        sim.simulate_to_dir(out, users, days=days, space=space, instant=instant, slot=slot,
                            checkin_rate=checkin_rate, seed=seed, overwrite=overwrite,
                            progress=lambda done, total: bar.update(task, completed=done))
    say(f"wrote {out}: {users} simulated users")


@app.command()
@reports_errors
def methods(
    name: Optional[str] = typer.Argument(None, help="A method: show its hyperparameters."),
):
    """The registered synthesizers and anonymizers, their capability tags and hyperparameters."""
    from ..synth import registry

    if name is None:
        rows = []
        for n in registry.names():
            m = registry.method(n)
            missing = m.missing()
            tags = "" if missing else ", ".join(registry.get(n).tags.names())
            state = f"needs pip install 'locsynth[{m.extra}]'" if missing else "available"
            rows.append([n, m.kind, tags or "-", state, m.summary])
        _table("locsynth methods", ["method", "kind", "tags", "", "what it is"], rows)
        say("locsynth methods NAME shows a method's hyperparameters.")
        return
    kind = registry.get(name)
    doc = inspect.getdoc(kind) or ""
    say(f"{name} ({registry.method(name).kind}): {doc.splitlines()[0] if doc else ''}")
    rows = [["--" + p.replace("_", "-"), repr(h.default), h.help] for p, h in kind.declarations().items()]
    verb = "fit" if registry.method(name).kind == "synthesizer" else "anonymize"
    _table(f"hyperparameters of {name} (locsynth {verb} {name} ... --NAME VALUE, or NAME=VALUE in --param and specs)",
           ["option", "default", "what it is"], rows)
    for step, options in (("fit", getattr(kind, "fit_options", {})), ("sample", getattr(kind, "sample_options", {}))):
        if options:
            _table(f"{step} options of {name} (locsynth {step} ... --NAME VALUE)", ["option", "default", "what it does"],
                   [["--" + k.replace("_", "-"), repr(spec[0]), spec[1]] for k, spec in options.items()])


@app.command(context_settings=PARAMS)
@reports_errors
def fit(
    ctx: typer.Context,
    method: str = typer.Argument(..., help="A synthesizer (locsynth methods lists them)."),
    train: Path = typer.Argument(..., help="Training TraceSet."),
    out: Path = typer.Option(..., "--out", "-o", help="Model directory to write."),
    param: List[str] = typer.Option([], "--param", "-p", metavar="NAME=VALUE",
                                    help="A hyperparameter; also --NAME VALUE (e.g. --alpha 200 --iterations 100)."),
    seed: int = typer.Option(0, help="Random seed (of the method's non-DP randomness)."),
    workers: Optional[int] = typer.Option(None, metavar="N", help=WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help=SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Fit a synthesizer to a training TraceSet and save the model.

    Any constructor parameter of the method, and any fit option it declares, is an option: --NAME
    VALUE or --param NAME=VALUE (locsynth methods METHOD lists them with their defaults)."""
    from ..synth import registry

    kind = registry.get(method)
    if registry.method(method).kind != "synthesizer":
        raise InputError(f"{method} is an anonymizer: use locsynth anonymize {method}")
    params, options = _method_args(kind, ctx.args, param, kind.fit_options)
    if "seed" in kind.hyperparameters():
        params.setdefault("seed", seed)
    _refuse_existing(out, overwrite=overwrite)
    from ..data.traces import TraceSet

    ts = TraceSet.load(train)
    mismatch = kind.tags.mismatch(ts, method)
    if mismatch:
        say(f"note: {mismatch}; fitting anyway")
    model = kind(**params)
    if (workers is not None or scheduler is not None) and "fit" not in kind.distributed:
        raise InputError(f"--workers and --scheduler do not apply to fitting {method}")
    from ..core.parallel import executor

    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task(f"fitting {method}", total=None)

        def progress(done, total, status=""):
            bar.update(task, completed=done, total=total, description=f"fitting {method} {status}".rstrip())

        model.fit(ts, progress=progress, client=client, **options)
    facts = ", ".join(f"{k} {v}" for k, v in model.summary().items())
    say(f"fitted {method}" + (f": {facts}" if facts else ""))
    for line in model.ledger_.describe():
        say(f"privacy: {line}")
    model.save(out, overwrite=overwrite)
    say(f"wrote {out}")


@app.command(context_settings=PARAMS)
@reports_errors
def sample(
    ctx: typer.Context,
    model_dir: Path = typer.Argument(..., help="A model directory from locsynth fit."),
    out: Path = typer.Option(..., "--out", "-o", help="Synthetic TraceSet directory to write (internal: see release)."),
    traces_per_user: Optional[int] = typer.Option(None, help="Traces per synthetic user (default 1)."),
    users: Optional[int] = typer.Option(None, help="Synthetic users n (default: a DP method's DP count of its "
                                                   "training users or trips; any other method's training users; "
                                                   "more only for methods with virtual users)."),
    days: int = typer.Option(1, help="Days per trace."),
    seed: int = typer.Option(0, help="Random seed."),
    workers: Optional[int] = typer.Option(None, metavar="N", help=WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help=SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Generate synthetic traces from a fitted model.

    Any sample option the method declares is an option too: --NAME VALUE (locsynth methods METHOD
    lists them, e.g. --instants N, --home-regions)."""
    from ..synth.base import Synthesizer

    _refuse_existing(out, overwrite=overwrite)
    model = Synthesizer.load(model_dir)
    _, options = _method_args(type(model), ctx.args, [], model.sample_options, "sample option")
    if (workers is not None or scheduler is not None) and "sample" not in model.distributed:
        raise InputError(f"--workers and --scheduler do not apply to {model.name}")
    from ..core.parallel import executor

    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task(f"sampling from {model.name} (users)", total=None)
        syn = model.sample(users, days=days, seed=seed, traces_per_user=traces_per_user or 1, client=client,
                           progress=lambda done, total: bar.update(task, completed=done, total=total), **options)
    syn.save(out, overwrite=overwrite)
    say(f"wrote {out}: {syn.n_traces} traces of {syn.n_users} users, {syn.n_events} events")
    for line in model.describe_sample(syn):
        say(line)


@app.command()
@reports_errors
def pdtest(
    model_dir: Path = typer.Argument(..., help="The model that generated the traces (a method with the pd_test tag: ppmtf, ppmtf-plus)."),
    synthetic: Path = typer.Argument(..., help="Synthetic TraceSet from locsynth sample."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for pdtest.json and pdtest.csv."),
    k: int = typer.Option(10, help="Required k of (k, eta)-plausible deniability."),
    eta: float = typer.Option(1.0, help="eta of (k, eta)-plausible deniability."),
    candidates: Optional[int] = typer.Option(None, help="|U*|: random candidate users (default: all; paper: 32000)."),
    seed: int = typer.Option(0, help="Seed of the candidate subset."),
    workers: Optional[int] = typer.Option(None, metavar="N", help=WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help=SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Privacy Test 1 (paper 001 §3.5) for every synthetic trace; its output filters a release."""
    from ..core.parallel import executor
    from ..synth.base import Synthesizer
    from ..data.traces import TraceSet

    _refuse_existing(out, overwrite=overwrite)
    model = Synthesizer.load(model_dir)
    if not model.tags.pd_test:
        raise InputError(f"the PD test needs a model with the pd_test tag (locsynth methods shows the tags); "
                         f"{model_dir} holds {model.name}")
    syn = TraceSet.load(synthetic)
    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task("PD test" + (" (traces)" if client is not None else " (candidates)"), total=None)
        result = model.pd_test(syn, k=k, eta=eta, candidates=candidates, seed=seed, client=client,
                               progress=lambda done, total: bar.update(task, completed=done, total=total))
    result.save(out, syn, overwrite=overwrite, seed=seed)
    s = result.summary()
    say(f"(k={k}, eta={eta})-PD: {s['passed']} of {s['traces']} traces pass ({s['pass_rate']:.3f}) against "
        f"{s['candidates']} candidates; wrote {out}")


@app.command(context_settings=PARAMS)
@reports_errors
def anonymize(
    ctx: typer.Context,
    method: str = typer.Argument(..., help="An anonymizer (locsynth methods lists them)."),
    traces: Path = typer.Argument(..., help="TraceSet to perturb."),
    out: Path = typer.Option(..., "--out", "-o", help="Anonymized TraceSet directory to write (internal: see release)."),
    param: List[str] = typer.Option([], "--param", "-p", metavar="NAME=VALUE",
                                    help="A hyperparameter; also --NAME VALUE (e.g. --epsilon 1)."),
    seed: int = typer.Option(0, help="Seed of the non-DP randomness (DP noise is never seeded)."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Perturb every trace with an anonymizer (k-RR, planar Laplace, ...)."""
    from ..synth import registry

    kind = registry.get(method)
    if registry.method(method).kind != "anonymizer":
        raise InputError(f"{method} is a synthesizer: use locsynth fit {method}")
    anonymizer = kind(**_hyperparameters(kind, ctx.args, param))
    _refuse_existing(out, overwrite=overwrite)
    from ..data.traces import TraceSet

    result = anonymizer.transform(TraceSet.load(traces), seed=seed)
    for line in result.ledger.describe():
        say(f"privacy: {line}")
    result.save(out, overwrite=overwrite)
    say(f"wrote {out}: {result.n_traces} traces, {result.n_events} events")


def _evaluate_params():
    """--attacks and every option the metric groups declare (locsynth.evaluation.suite), for ``evaluate``."""
    from ..evaluation import suite
    from ..metrics.groups import Option

    help_ = (f"Attacks to run, comma-separated: {', '.join(suite.attacks())}; 'all' (the default) or 'none'.")
    return typer_params([Option("attacks", "all", help_), *suite.options().values()])


@app.command(cls=declared_command(_evaluate_params))
@reports_errors
def evaluate(
    ctx: typer.Context,
    train: Path = typer.Option(..., help="Training TraceSet (the members)."),
    test: Path = typer.Option(..., help="Test TraceSet (the reference for utility; the non-members)."),
    synthetic: Path = typer.Option(..., help="Synthetic TraceSet, or a release directory (with --key)."),
    key: Optional[Path] = typer.Option(None, help="The key file of a release (pseudonym -> source), for the attacks."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for metrics.json and report.html."),
    workers: Optional[int] = typer.Option(None, metavar="N", help="Attacks: " + WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help="Attacks: " + SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Utility metrics and privacy attacks; writes metrics.json and report.html. Sets of trips (prepare
    --format cab-trips) get paper 004's trip metrics instead; every set gets the field's standard
    suite (AdaTrace's and PrivTrace's query, density, trip, length, diameter, pattern, coverage and
    hotspot errors). Every metric group's options are options here (their defaults in --help)."""
    from ..evaluation import suite
    from ..evaluation.evaluate import evaluate as run_evaluate
    from ..core.parallel import executor
    from ..release.publish import is_release, load_release
    from ..data.traces import TraceSet

    given = given_options(ctx, ["attacks", *suite.options()])
    chosen = given.pop("attacks", "all")
    _refuse_existing(out, overwrite=overwrite)
    if is_release(synthetic):
        syn = load_release(synthetic, key)
    elif key is not None:
        raise InputError(f"--key goes with a release directory; {synthetic} is not one")
    else:
        syn = TraceSet.load(synthetic)
    sets = {"train": TraceSet.load(train), "test": TraceSet.load(test)}
    with executor(workers, scheduler) as client, spinner("evaluating") as status:
        report = run_evaluate(sets["train"], sets["test"], syn, attacks=chosen, options=given, client=client,
                              progress=on_spinner(status, "evaluating: "))
        report.save(out, overwrite=overwrite)
    cols = ("synthetic", "training", "uniform")
    _table(f"{synthetic} against {test}", ["metric", *cols],
           [[key_, *(_fmt(row[c]) for c in cols)] for key_, row in report.metrics.items()])
    skipped = [key_ for entry in report.meta.get("skipped", []) for key_ in entry["metrics"]]
    if skipped:
        say(f"not computed for trips: {', '.join(skipped)} (report.html says why)")
    say(f"wrote {out}/metrics.json and {out}/report.html")


@app.command()
@reports_errors
def release(
    synthetic: Path = typer.Argument(..., help="Synthetic (or anonymized) TraceSet to release."),
    out: Path = typer.Option(..., "--out", "-o", help="Release directory to write."),
    pdtest: Optional[Path] = typer.Option(None, help="PD test output of this set: release only the traces that pass."),
    key: Optional[Path] = typer.Option(None, help="Also write the pseudonym -> source key here (kept apart, for "
                                                  "evaluation only)."),
    evaluation: Optional[Path] = typer.Option(None, help="An evaluation of this set: its attack results go on the "
                                                         "release card."),
    overwrite: bool = typer.Option(False, help="Replace OUT (and KEY) if they exist."),
):
    """Turn a synthetic set into a release: passing traces only, random pseudonyms, a release card."""
    from ..release.publish import release as make_release
    from ..data.traces import TraceSet

    _refuse_existing(out, overwrite=overwrite)
    card = make_release(TraceSet.load(synthetic), out, pdtest=pdtest, key=key, evaluation=evaluation,
                        overwrite=overwrite)
    pd_text = (f" that passed the (k={card['pd_test']['k']}, eta={card['pd_test']['eta']:g}) PD test"
               if card["pd_test"] else "")
    say(f"wrote {out}: {card['traces']} traces{pd_text}, {card['events']} events, under random pseudonyms; "
        f"card in {out}/RELEASE.md" + (f"; key in {key}" if key else ""))
    for line in card["ledger_summary"]:
        say(f"privacy: {line}")


@app.command()
@reports_errors
def compare(
    runs: List[Path] = typer.Argument(..., help="Evaluation directories (or metrics.json files) to compare."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for compare.csv, tradeoff.png (the trips' per-hour "
                             "plots for evaluations of trips) and compare.html."),
    utility: str = typer.Option("tp_tv", help="Utility metric on the y axis."),
    privacy: str = typer.Option("reid_rate", help="Privacy metric on the x axis."),
    show_all: bool = typer.Option(False, "--all", help="Print every metric, not only the key ones that fit."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """One table of several evaluations and a utility-versus-privacy plot (paper 001 Figure 7); for
    evaluations of trips, their per-hour curves side by side (paper 004 Figures 3-4)."""
    from ..evaluation.report import comparison, load_metrics
    from ..evaluation.report.compare import run_meta
    from ..evaluation.report.labels import run_label
    from ..core.files import atomic_output

    loaded = [load_metrics(p) for p in runs]
    places = [p.stem if p.is_file() else p.name for p in runs]
    names = [run_label(run_meta(data), place) for data, place in zip(loaded, places)]
    if len(set(names)) != len(names):
        names = [name if names.count(name) == 1 else f"{name} ({place})" for name, place in zip(names, places)]
    if len(set(names)) != len(names):
        names = [str(p) for p in runs]
    table, files = comparison(dict(zip(names, loaded)), utility=utility, privacy=privacy)
    with atomic_output(out, overwrite, directory=True) as tmp:
        table.to_csv(tmp / "compare.csv")
        for name, content in files.items():
            if isinstance(content, str):
                (tmp / name).write_text(content)
            else:
                (tmp / name).write_bytes(content)
    _comparison_table(table, show_all)
    say(f"wrote {out}/compare.csv, {', '.join(files)}")


@app.command()
@reports_errors
def lbs(
    train: Optional[Path] = typer.Option(None, help="Training TraceSet to fit the SGLT model on (unless --model)."),
    test: Path = typer.Option(..., help="Test TraceSet: the users who query the location-based service."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for lbs.csv, lbs.png and lbs.html."),
    fakes: str = typer.Option("1,5,10", help="Numbers m of fake traces sent along each query, comma-separated."),
    model: Optional[Path] = typer.Option(None, "--model", help="A fitted SGLT model directory instead of fitting one "
                                         "on --train."),
    clusters: Optional[int] = typer.Option(None, help="Semantic classes of the SGLT model fitted on --train "
                                           "(default: SGLT's default)."),
    repeats: int = typer.Option(5, help="Repetitions averaged (paper 002: 20)."),
    pool: int = typer.Option(10, help="SGLT fakes per training user in the pool the users draw theirs from."),
    adversary: str = typer.Option("aggregate", help="What the adversary knows: aggregate (the aggregate mobility "
                                  "model, as in the paper) or profile (also the user's own chain)."),
    query_minutes: float = typer.Option(40.0, help="Mean time between two queries of a user, in minutes."),
    temperature: Optional[float] = typer.Option(None, help="SGLT fakes are drawn with weights exp(loglik / "
                                                "temperature); default: the instants of a day (1: untempered)."),
    seed: int = typer.Option(0, help="Random seed."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Fake traces for location-based services: privacy against utility loss of SGLT fakes and four
    baselines (paper 002 §VII, Figure 6)."""
    from ..lbs.scenario import run_lbs
    from ..lbs.page import lbs_html, lbs_png
    from ..core.files import atomic_output

    _refuse_existing(out, overwrite=overwrite)
    with progress_bar() as bar:
        task = bar.add_task("LBS", total=None)
        table, what, notes = run_lbs(test, train=train, model=model, clusters=clusters, fakes=fakes,
                                     repeats=repeats, pool=pool, adversary=adversary, query_minutes=query_minutes,
                                     temperature=temperature, seed=seed,
                                     progress=lambda done, total, status="": bar.update(
                                         task, completed=done, total=total, description=status or None))
    for note in notes:
        say("note: " + as_flags(note))
    png = lbs_png(table)
    with atomic_output(out, overwrite, directory=True) as tmp:
        table.to_csv(tmp / "lbs.csv", index=False)
        (tmp / "lbs.png").write_bytes(png)
        (tmp / "lbs.html").write_text(lbs_html(table, png, what))
    say(what)
    say(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    say(f"wrote {out}/lbs.csv, lbs.png and lbs.html")


def _attacks_help() -> str:
    from ..evaluation import suite

    return f"Attacks to run, comma-separated: {', '.join(suite.attacks())}; 'all' or 'none'."


def _flavour_help() -> str:
    from ..evaluation import suite

    return suite.options()["standard_flavour"].help


@app.command(cls=declared_command(helps={"attacks": _attacks_help, "standard_flavour": _flavour_help}))
@reports_errors
def benchmark(
    data: str = typer.Option(..., metavar="DIR[,DIR...]", help="Prepared datasets (each with train/ and test/)."),
    methods: Optional[str] = typer.Option(None, metavar="NAME,...", help="Methods to run (default: every "
                                          "registered one that fits each dataset)."),
    epsilon: str = typer.Option("0.5,1,2", metavar="E,...", help="Epsilons of the methods that take one."),
    repeats: int = typer.Option(3, help="Independent runs of each method and epsilon."),
    out: Path = typer.Option(..., "--out", "-o", help="Benchmark directory (rerun the same line to resume)."),
    size: Optional[int] = typer.Option(None, help="Traces of every synthetic set (default: the test set's)."),
    attacks: str = typer.Option("all", help="Attacks to run (the list: locsynth benchmark --help)."),
    param: List[str] = typer.Option([], "--param", metavar="METHOD.NAME=VALUE",
                                    help="A method's hyperparameter (repeatable), e.g. ppmtf.iterations=20."),
    seed: int = typer.Option(0, help="Seed of repeat 0 (repeat r uses seed + r); the evaluation's seed."),
    workers: Optional[int] = typer.Option(None, metavar="N", help="Run the runs on a local Dask cluster of N "
                                          "single-threaded worker processes."),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help=SCHEDULER_HELP),
    standard_flavour: str = typer.Option("adatrace", metavar="FLAVOUR", help="The standard suite's flavour."),
):
    """The field's benchmark: every applicable method on every dataset, at every epsilon, repeated,
    scored by every metric that applies (the standard suite, the papers' own, the attacks) into
    results.csv and leaderboard.html."""
    from ..benchmark.runs import parse_params, run_benchmark
    from ..core.parallel import executor

    dirs = [Path(d.strip()) for d in data.split(",") if d.strip()]
    chosen = None if methods is None else [m.strip() for m in methods.split(",") if m.strip()]
    try:
        epsilons = [float(e) for e in epsilon.split(",") if e.strip()]
    except ValueError:
        raise InputError(f"--epsilon takes numbers separated by commas, got {epsilon!r}") from None
    from ..evaluation.evaluate import parse_attacks

    run_attacks = list(parse_attacks(attacks))
    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task("benchmark", total=None)
        results = run_benchmark(dirs, out, methods=chosen, epsilons=epsilons, repeats=repeats, size=size,
                                attacks=run_attacks, seed=seed, params=parse_params(param), client=client,
                                standard_flavour=standard_flavour, log=say, progress=lambda done, total, running: bar.update(
                                    task, completed=done, total=total, description=running))
    _benchmark_table(results, standard_flavour)
    say(f"wrote {out}/results.csv ({len(results)} rows) and {out}/leaderboard.html")


def _benchmark_table(results, standard_flavour: str) -> None:
    """Per dataset, the mean rank and a few metrics of every method and epsilon (evaluation/report/terminal.py)."""
    from ..evaluation.report.terminal import benchmark_tables

    for table in benchmark_tables(results, standard_flavour):
        console().print(table.rich())


@app.command()
@reports_errors
def demo(
    out: Path = typer.Option(Path("locsynth-demo"), "--out", "-o", help="Working directory of the demo."),
    data: Optional[Path] = typer.Option(None, help="A prepared pair DIR/train, DIR/test instead of a simulated city."),
    users: int = typer.Option(1000, help="Simulated users (half train, half test)."),
    iterations: int = typer.Option(100, help="The iterations of every method with an iterations hyperparameter "
                                   "(PPMTF's and PPMTF+'s Gibbs sweeps)."),
    traces_per_user: int = typer.Option(1, help="Synthetic traces per training user."),
    method: List[str] = typer.Option([], "--method", "-m", help="Run only these methods (default: every one)."),
    seed: int = typer.Option(0, help="Random seed."),
):
    """The main job: every registered method on one simulated city (or --data), evaluated on the same test users."""
    from ..benchmark.demo import SUMMARY, run_demo

    with progress_bar() as bar:
        task = bar.add_task("starting", total=None)
        summary = run_demo(out, users=users, seed=seed, data=data, iterations=iterations,
                           traces_per_user=traces_per_user, methods=method or None,
                           progress=on_bar(bar, task))
    from ..evaluation.report.compare import KINDS, method_kind

    runs, n = summary["methods"], summary["users"]
    names = sorted(runs, key=lambda name: KINDS.index(method_kind(name)))
    rows = [[name, *(_fmt(runs[name]["metrics"].get(key, {}).get("synthetic"), 3) for key, _ in SUMMARY),
             _fmt(runs[name]["pd_pass_rate"], 3), _epsilon(runs[name]["totals"])] for name in names]
    headings = {"synthesizer": "synthesizers", "anonymizer": "anonymizers", "baseline": "baselines"}
    _table(f"locsynth demo on {summary['source']}: {n['train']} training, {n['test']} test users",
           ["method", *(label for _, label in SUMMARY), "PD pass", "DP eps"], rows, compact=True,
           groups=[headings[method_kind(name)] for name in names])
    say("Lower is better in every column but PD pass (the share of traces a release may keep, k = "
        f"{summary['k']}); DP eps is the epsilon that holds per person (every spend on their data), or per "
        "event where a person's events are not bounded. The baselines release real "
        "(or random) traces: they show what no protection looks like.")
    for name, reason in summary["skipped"].items():
        say(f"skipped {name}: {reason}")
    bounded = [name for name, run in runs.items() if any(t["bounds_only"] for t in run["totals"].values())]
    if bounded:
        names = " and ".join([", ".join(bounded[:-1]), bounded[-1]] if len(bounded) > 1 else bounded)
        say(f"The papers' DP bounds for {names} need assumptions not met here, so they are not guarantees; the PD "
            "test and the attacks are the evidence.")
    say(f"Comparison: {out}/report.html; each method: {out}/METHOD/")


def _comparison_table(table, show_all: bool) -> None:
    """The key metrics of a comparison that fit the terminal (every one with ``show_all``), laid out
    by evaluation/report/terminal.py."""
    from ..evaluation.report.terminal import comparison_table

    shown, left = comparison_table(table, None if show_all else console().width)
    console().print(shown.rich())
    if left:
        say(f"{len(left)} more metric{'s' if len(left) > 1 else ''} in compare.csv and compare.html (--all prints them)")


def _epsilon(totals: dict) -> str:
    person = totals.get("person", {}).get("epsilon")
    if person is not None:
        return f"{person:.3g}/person"
    held = [(unit, t["epsilon"]) for unit, t in totals.items() if t["spends"] and unit != "person"]
    return ", ".join(f"{eps:.3g}/{unit.split()[0]}" for unit, eps in held) if held else "none"


def _add_subcommands() -> None:
    from .contest import contest_app

    app.add_typer(contest_app, name="contest")


_add_subcommands()


def main() -> None:  # pragma: no cover
    """The ``locsynth`` script: the app, then an exit that skips the interpreter's teardown.

    Every command has closed its files and clusters by the time it returns; what is left is
    Python unloading numba, pandas, matplotlib and POT module by module, which took 0.3-0.8 s
    (benchmarks/bench_cli.py). An uncaught exception still ends the normal way, with its traceback.
    POT is imported without its torch backend (1.5 s of its 3.3 s import): locsynth gives it numpy
    arrays only, and DPTrip imports torch itself.
    """
    os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")
    try:
        app(prog_name="locsynth")
        code = 0
    except SystemExit as exc:
        code = exc.code
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
