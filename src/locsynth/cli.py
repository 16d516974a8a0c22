"""The ``locsynth`` command: argument parsing and progress display only (DESIGN.md)."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from .errors import InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Synthesize privacy-preserving location traces and measure their utility and privacy.")
console = Console(stderr=True)
out_console = Console()


def reports_errors(fn):
    """Bad input: one line on stderr, exit code 2, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


WORKERS_HELP = "Run the per-user work on a local Dask cluster of N single-threaded worker processes."
SCHEDULER_HELP = "Run the per-user work on the running Dask cluster at this scheduler address (tcp://HOST:PORT)."


def progress_bar() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console, transient=True, disable=not console.is_terminal)


@app.command()
@reports_errors
def prepare(
    input: Path = typer.Argument(..., help="Input file or folder."),
    format: str = typer.Option(..., "--format", "-f", help="Input format: pf, pf-synthetic, foursquare, "
                               "foursquare-global, foursquare-mat, gowalla, geolife, cabs, csv, parquet."),
    out: Path = typer.Option(..., "--out", "-o", help="Output TraceSet directory (DIR/train and DIR/test when split)."),
    grid: Optional[str] = typer.Option(None, help="Regular grid ROWSxCOLS, e.g. 20x20."),
    bbox: Optional[str] = typer.Option(None, help="Bounding box LAT_MIN,LAT_MAX,LON_MIN,LON_MAX."),
    pois: Optional[int] = typer.Option(None, help="Keep the N most visited POIs (paper 001 keeps 1000)."),
    instant: Optional[str] = typer.Option(None, help="Instant length, rounding down: 1h, 30min, 20min (default 1h)."),
    slot: Optional[str] = typer.Option(None, help="Slot length, cycling each day (default 2h)."),
    window: Optional[str] = typer.Option(None, help="Daily window START-END, e.g. 08:00-18:00."),
    timezone: Optional[str] = typer.Option(None, help="Timezone of naive timestamps and of days (default UTC)."),
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
    from . import prepare as prep

    reader_options = {k: v for k, v in {
        "pois_file": pois_file, "user_col": user_col, "time_col": time_col, "lat_col": lat_col,
        "lon_col": lon_col, "venue_col": venue_col, "time_unit": time_unit}.items() if v is not None}
    with console.status(f"preparing {input} ({format})"):
        sets = prep.prepare(
            input, format, out, grid=prep.parse_grid(grid) if grid else None,
            bbox=prep.parse_bbox(bbox) if bbox else None, pois=pois, instant=instant, slot=slot,
            window=prep.parse_window(window) if window else None, timezone=timezone,
            split=prep.parse_split(split) if split else None, like=like, duplicates=duplicates,
            seed=seed, overwrite=overwrite, reader_options=reader_options, friends=friends,
            fold_days=fold_days)
    for name, ts in sets.items():
        s = ts.summary()
        where = out / name if name else out
        out_console.print(f"wrote {where}: {s['users']} users, {s['traces']} traces, {s['events']} events, "
                          f"{s['locations']} locations, {s['instants']} instants/day, {s['slots']} slots",
                          highlight=False)


@app.command()
@reports_errors
def info(
    directory: Path = typer.Argument(..., help="A TraceSet directory."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object."),
):
    """Users, traces, events, locations, instants, slots and time span of a TraceSet."""
    from .traces import TraceSet

    s = TraceSet.load(directory).summary()
    if as_json:
        typer.echo(json.dumps(s, indent=2))
        return
    table = Table(title=str(directory), show_header=False)
    for key, value in s.items():
        table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
    out_console.print(table)


@app.command()
@reports_errors
def export(
    directory: Path = typer.Argument(..., help="A TraceSet directory."),
    out: Path = typer.Option(..., "--out", "-o", help="CSV file to write."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Write a TraceSet as CSV: user_id,datetime,lat,lon,location_id."""
    from .traces import TraceSet

    ts = TraceSet.load(directory)
    ts.to_csv(out, overwrite=overwrite)
    out_console.print(f"wrote {out}: {ts.n_events} events", highlight=False)


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
    from . import simulate as sim
    from .prepare import parse_grid

    space = sim.make_space(grid=parse_grid(grid) if grid else None, pois=pois, seed=seed)
    with progress_bar() as bar:
        task = bar.add_task("simulating", total=users)
        sim.simulate_to_dir(out, users, days=days, space=space, instant=instant, slot=slot,
                            checkin_rate=checkin_rate, seed=seed, overwrite=overwrite,
                            progress=lambda done, total: bar.update(task, completed=done))
    out_console.print(f"wrote {out}: {users} simulated users", highlight=False)


METHODS = ("ppmtf", "ppmtf-plus", "sgd", "uniform", "training")


@app.command()
@reports_errors
def fit(
    method: str = typer.Argument(..., help="ppmtf, ppmtf-plus, sgd, uniform or training."),
    train: Path = typer.Argument(..., help="Training TraceSet."),
    out: Path = typer.Option(..., "--out", "-o", help="Model directory to write."),
    alpha: float = typer.Option(200.0, help="PPMTF: precision of the counts (paper 001: 200 on PF)."),
    rank: int = typer.Option(16, help="PPMTF: number of factors z."),
    iterations: int = typer.Option(100, help="PPMTF: Gibbs sweeps (the last sample is used)."),
    lam: int = typer.Option(100, "--lambda", help="PPMTF: positive cells kept per user and tensor."),
    r_max: int = typer.Option(10, help="PPMTF: count cap."),
    rho: int = typer.Option(1000, help="PPMTF: zero cells per user and tensor."),
    hyper: str = typer.Option("bpmf", help="PPMTF: hyperparameter update, bpmf or authors."),
    xi: int = typer.Option(0, help="SGD: events copied from the input user."),
    checkpoint: Optional[Path] = typer.Option(None, help="PPMTF: save each sweep here and resume from it."),
    seed: int = typer.Option(0, help="Random seed."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Fit a synthesizer to a training TraceSet and save the model."""
    from .synth import REGISTRY
    from .traces import TraceSet

    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if out.exists() and not overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    ts = TraceSet.load(train)
    kind = REGISTRY[method]
    if method in ("ppmtf", "ppmtf-plus"):
        model = kind(alpha=alpha, rank=rank, iterations=iterations, lam=lam, r_max=r_max, rho=rho, hyper=hyper,
                     seed=seed)
        with progress_bar() as bar:
            task = bar.add_task("Gibbs sampling", total=iterations)
            model.fit(ts, checkpoint=checkpoint, progress=lambda it, total, err: bar.update(
                task, completed=it, description=f"Gibbs sampling (RMSE {err:.4f})"))
        eps = model.epsilon()
        out_console.print(f"fitted {method}: {iterations} iterations, training RMSE {model.rmse_[-1]:.4f}; "
                          f"DP of the factors (Appendix F, kappa = 0): epsilon >= {eps['trace']:.4g} per trace, "
                          f">= {eps['location']:.4g} per location", highlight=False)
    else:
        model = (kind(xi=xi, seed=seed) if method == "sgd" else kind(seed=seed) if method == "uniform" else kind()).fit(ts)
        out_console.print(f"fitted {method}", highlight=False)
    model.save(out, overwrite=overwrite)
    out_console.print(f"wrote {out}", highlight=False)


@app.command()
@reports_errors
def sample(
    model_dir: Path = typer.Argument(..., help="A model directory from locsynth fit."),
    out: Path = typer.Option(..., "--out", "-o", help="Synthetic TraceSet directory to write."),
    traces_per_user: int = typer.Option(1, help="Traces per input (or virtual) user."),
    users: Optional[int] = typer.Option(None, help="PPMTF+: number of virtual users (default: as many as trained on)."),
    days: int = typer.Option(1, help="Days per trace."),
    instants: Optional[int] = typer.Option(None, help="PPMTF: instants per trace instead of whole days."),
    home_regions: bool = typer.Option(False, help="PPMTF+: give every virtual user a home (paper 003 App. D)."),
    seed: int = typer.Option(0, help="Random seed."),
    workers: Optional[int] = typer.Option(None, metavar="N", help="PPMTF: " + WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help="PPMTF: " + SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Generate synthetic traces from a fitted model."""
    from .parallel import executor
    from .synth import PPMTF, PPMTFPlus, load_model

    if out.exists() and not overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    model = load_model(model_dir)
    if not isinstance(model, PPMTF) and (workers is not None or scheduler is not None):
        raise InputError("--workers and --scheduler apply to ppmtf and ppmtf-plus")
    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task(f"sampling from {model.name} (users)", total=None)
        if isinstance(model, PPMTF):
            extra = {"instants": instants, "client": client,
                     "progress": lambda done, total: bar.update(task, completed=done, total=total)}
        elif instants is not None:
            raise InputError("--instants applies to ppmtf and ppmtf-plus")
        else:
            extra = {}
        if isinstance(model, PPMTFPlus):
            syn = model.sample(n_users=users, traces_per_user=traces_per_user, days=days, seed=seed,
                               home_regions=home_regions, **extra)
        else:
            if users is not None:
                raise InputError("--users (virtual users) applies to ppmtf-plus only")
            syn = model.sample(traces_per_user=traces_per_user, days=days, seed=seed, **extra)
    syn.save(out, overwrite=overwrite)
    out_console.print(f"wrote {out}: {syn.n_traces} traces of {syn.n_users} users, {syn.n_events} events",
                      highlight=False)


@app.command()
@reports_errors
def pdtest(
    model_dir: Path = typer.Argument(..., help="The PPMTF model that generated the traces."),
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
    """Privacy Test 1 (paper 001 §3.5) for every synthetic trace."""
    import pandas as pd

    from .parallel import executor
    from .synth import PPMTF, load_model
    from .traces import TraceSet, atomic_output

    if out.exists() and not overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    model = load_model(model_dir)
    if not isinstance(model, PPMTF):
        raise InputError(f"the PD test needs a PPMTF model; {model_dir} holds {model.name}")
    syn = TraceSet.load(synthetic)
    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task("PD test" + (" (traces)" if client is not None else " (candidates)"), total=None)
        result = model.pd_test(syn, k=k, eta=eta, candidates=candidates, seed=seed, client=client,
                               progress=lambda done, total: bar.update(task, completed=done, total=total))
    summary = {"pass_rate": result.pass_rate, "passed": int(result.passed.sum()), "traces": int(result.passed.size),
               "k": k, "eta": eta, "candidates": int(result.candidates.size), "seed": seed}
    per_trace = pd.DataFrame({"user_id": syn.users["user_id"], "source": syn.users["source"],
                              "trace_no": syn.users["trace_no"], "loglik": result.loglik,
                              "count": result.counts, "passed": result.passed})
    with atomic_output(out, overwrite, directory=True) as tmp:
        (tmp / "pdtest.json").write_text(json.dumps(summary, indent=2))
        per_trace.to_csv(tmp / "pdtest.csv", index=False)
    out_console.print(f"(k={k}, eta={eta})-PD: {summary['passed']} of {summary['traces']} traces pass "
                      f"({summary['pass_rate']:.3f}) against {summary['candidates']} candidates", highlight=False)


@app.command()
@reports_errors
def evaluate(
    train: Path = typer.Option(..., help="Training TraceSet (the members)."),
    test: Path = typer.Option(..., help="Test TraceSet (the reference for utility; the non-members)."),
    synthetic: Path = typer.Option(..., help="Synthetic TraceSet."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for metrics.json and report.html."),
    attacks: str = typer.Option("reid,mia", help="Attacks to run: reid, mia, both, or 'none'."),
    vf_bins: int = typer.Option(24, help="Bins of VF-TV (paper 001: 24; the authors' PF script: 30)."),
    mia_per_trace_number: bool = typer.Option(False, help="Decide membership once per trace number, as the "
                                              "authors' script does (the paper decides over all traces)."),
    seed: int = typer.Option(0, help="Seed of the TM-SWD projections."),
    workers: Optional[int] = typer.Option(None, metavar="N", help="Attacks: " + WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help="Attacks: " + SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Utility metrics and privacy attacks; writes metrics.json and report.html."""
    from .evaluate import evaluate as run_evaluate
    from .parallel import executor
    from .traces import TraceSet, atomic_output

    chosen = [] if attacks.strip().lower() == "none" else [a.strip() for a in attacks.split(",") if a.strip()]
    if out.exists() and not overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    sets = {name: TraceSet.load(path) for name, path in (("train", train), ("test", test), ("synthetic", synthetic))}
    with executor(workers, scheduler) as client, console.status("evaluating") as status:
        report = run_evaluate(sets["train"], sets["test"], sets["synthetic"], attacks=chosen, vf_bins=vf_bins,
                              mia_per_trace_number=mia_per_trace_number, seed=seed, client=client,
                              progress=lambda step: status.update(f"evaluating: {step}"))
        with atomic_output(out, overwrite, directory=True) as tmp:
            report.to_json(tmp / "metrics.json")
            report.to_html(tmp / "report.html")
    table = Table(title=f"{synthetic} against {test}")
    for col in ("metric", "synthetic", "training", "uniform"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for key, row in report.metrics.items():
        table.add_row(key, *(("-" if row[c] is None else f"{row[c]:.4f}") for c in ("synthetic", "training", "uniform")))
    out_console.print(table)
    out_console.print(f"wrote {out}/metrics.json and {out}/report.html", highlight=False)


@app.command()
@reports_errors
def compare(
    runs: list[Path] = typer.Argument(..., help="Evaluation directories (or metrics.json files) to compare."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for compare.csv, tradeoff.png and compare.html."),
    utility: str = typer.Option("tp_tv", help="Utility metric on the y axis."),
    privacy: str = typer.Option("reid_rate", help="Privacy metric on the x axis."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """One table of several evaluations and a utility-versus-privacy plot (paper 001 Figure 7)."""
    from .report import compare as build_table, compare_html, load_metrics, tradeoff_plot
    from .traces import atomic_output

    names = [p.stem if p.is_file() else p.name for p in runs]
    if len(set(names)) != len(names):
        names = [str(p) for p in runs]
    table = build_table({name: load_metrics(p) for name, p in zip(names, runs)})
    png = tradeoff_plot(table, utility=utility, privacy=privacy)
    with atomic_output(out, overwrite, directory=True) as tmp:
        table.to_csv(tmp / "compare.csv")
        (tmp / "tradeoff.png").write_bytes(png)
        (tmp / "compare.html").write_text(compare_html(table, png))
    out_console.print(table.to_string(float_format=lambda v: f"{v:.4f}"), highlight=False)
    out_console.print(f"wrote {out}/compare.csv, tradeoff.png and compare.html", highlight=False)


@app.command()
@reports_errors
def demo(
    out: Path = typer.Option(Path("locsynth-demo"), "--out", "-o", help="Working directory of the demo."),
    data: Optional[Path] = typer.Option(None, help="A prepared pair DIR/train, DIR/test instead of a simulated city."),
    users: int = typer.Option(1000, help="Simulated users (half train, half test)."),
    iterations: int = typer.Option(100, help="Gibbs sweeps."),
    traces_per_user: int = typer.Option(1, help="Synthetic traces per training user."),
    seed: int = typer.Option(0, help="Random seed."),
):
    """The main job: simulate a city (or use --data), fit PPMTF, sample, PD-test and evaluate."""
    from .pipeline import SUMMARY, run_demo

    with progress_bar() as bar:
        task = bar.add_task("starting", total=None)
        summary = run_demo(out, users=users, seed=seed, data=data, iterations=iterations,
                           traces_per_user=traces_per_user,
                           status=lambda text: bar.update(task, description=text, completed=0, total=None),
                           progress=lambda done, total: bar.update(task, completed=done, total=total))
    n = summary["users"]
    table = Table(title=f"locsynth demo: PPMTF on {summary['source']} ({n['train']} training, {n['test']} test users)")
    for col in ("metric (lower is better)", "PPMTF", "training traces", "uniform"):
        table.add_column(col, justify="left" if col.startswith("metric") else "right")
    fmt = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
    for key, label in SUMMARY:
        row = summary["metrics"].get(key)
        if row:
            table.add_row(label, fmt(row["synthetic"]), fmt(row["training"]), fmt(row["uniform"]))
    table.add_row("PD test pass rate (k=10, eta=1)", fmt(summary["pd_pass_rate"]), "", "")
    out_console.print(table)
    out_console.print(f"DP of the factors (paper 001 App. F): epsilon >= {summary['epsilon']['trace']:.3g} per trace; "
                      f"the PD test and the attacks above are the privacy evidence. Report: {out}/report.html",
                      highlight=False)


def main() -> None:  # pragma: no cover
    app(prog_name="locsynth")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
