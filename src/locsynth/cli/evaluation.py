"""``locsynth evaluate``, ``compare``, ``benchmark`` and ``demo``: measuring synthetic sets, alone,
side by side and across datasets. Parsing and printing only; the work is in locsynth.evaluation
and locsynth.benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..core.errors import InputError, LongRunWarning
from .common import (SCHEDULER_HELP, WORKERS_HELP, _fmt, _claim, _table, console, declared_command,
                     given_options, on_bar, on_spinner, progress_bar, reports_errors, said_as_they_come, say,
                     small_data, spinner, typer_params)
from .root import app


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
    sample_trips: Optional[int] = typer.Option(None, metavar="N", help="The trips of each set that the groups other "
                                               "than the standard suite score, a uniform sample (the standard suite "
                                               "counts every trip); the report states it and its error. Default: "
                                               "200,000 for partitioned sets, every trip otherwise."),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Utility metrics and privacy attacks; writes metrics.json and report.html. Sets of trips (prepare
    --format cab-trips) get paper 004's trip metrics instead; every set gets the field's standard
    suite (AdaTrace's and PrivTrace's query, density, trip, length, diameter, pattern, coverage and
    hotspot errors). Every metric group's options are options here (their defaults in --help).
    Partitioned sets (sample --partition-trips) are evaluated by partitions on --workers or
    --scheduler."""
    from ..evaluation import suite
    from ..evaluation.evaluate import evaluate as run_evaluate
    from ..evaluation.references import kept
    from ..core.parallel import executor
    from ..release.publish import is_release, load_release
    from ..data.partitioned import PartitionedTraceSet, load_traces
    from ..data.traces import is_trip_set

    given = given_options(ctx, ["attacks", *suite.options()])
    chosen = given.pop("attacks", "all")
    _claim(out, overwrite=overwrite, inputs=[train, test, synthetic, key])
    if is_release(synthetic):
        syn = load_release(synthetic, key)
    elif key is not None:
        raise InputError(f"--key goes with a release directory; {synthetic} is not one")
    else:
        syn = load_traces(synthetic)
    sets = {"train": load_traces(train), "test": load_traces(test)}
    partitioned = any(isinstance(ts, PartitionedTraceSet) for ts in (*sets.values(), syn))
    if sample_trips is not None and sample_trips < 1:
        raise InputError(f"--sample-trips must be at least 1, got {sample_trips}")
    if sample_trips is not None and not partitioned and not is_trip_set(sets["test"]):
        raise InputError(f"--sample-trips samples trips; {test} holds traces of days (prepare --format cab-trips, "
                         f"trips_from_frame make trips)")
    with executor(workers, scheduler) as client, spinner("evaluating") as status:
        if partitioned or sample_trips is not None:   # no cache of the references: the real sets are sampled
            from ..evaluation.partitioned import SAMPLE_TRIPS, evaluate_partitioned

            report = evaluate_partitioned(sets["train"], sets["test"], syn, attacks=chosen, options=given,
                                          sample_trips=SAMPLE_TRIPS if sample_trips is None else sample_trips,
                                          client=client, progress=on_spinner(status, "evaluating: "))
        else:
            with kept(sets["train"], sets["test"]) as references, said_as_they_come(LongRunWarning):
                report = run_evaluate(sets["train"], sets["test"], syn, attacks=chosen, options=given, client=client,
                                      progress=on_spinner(status, "evaluating: "), references=references)
        report.save(out, overwrite=overwrite)
    cols = ("synthetic", "training", "uniform")
    _table(f"{synthetic} against {test}", ["metric", *cols],
           [[key_, *(_fmt(row[c]) for c in cols)] for key_, row in report.metrics.items()])
    skipped = [key_ for entry in report.meta.get("skipped", []) for key_ in entry["metrics"]]
    if skipped:
        say(f"not computed for trips: {', '.join(skipped)} (report.html says why)")
    from ..evaluation.report.html import uninformative

    blind = uninformative(report.metrics)
    if blind:
        say(f"uninformative here: {', '.join(blind)} score the training traces and random ones alike on this data "
            f"(sparse traces?): their synthetic values say nothing")
    say(f"wrote {out}/metrics.json and {out}/report.html")


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

    _claim(out, overwrite=overwrite, inputs=runs)
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


def _comparison_table(table, show_all: bool) -> None:
    """The key metrics of a comparison that fit the terminal (every one with ``show_all``), laid out
    by evaluation/report/terminal.py."""
    from ..evaluation.report.terminal import comparison_table

    shown, left = comparison_table(table, None if show_all else console().width)
    console().print(shown.rich())
    if left:
        say(f"{len(left)} more metric{'s' if len(left) > 1 else ''} in compare.csv and compare.html (--all prints them)")


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

    with progress_bar() as bar, small_data() as warned:
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
    for message in warned:          # one line each, as fit prints them: the simulated city is small on purpose
        say("warning: " + message.split(" (")[0] + " (SmallDataWarning)")
    say(f"Comparison: {out}/report.html; each method: {out}/METHOD/")


def _epsilon(totals: dict) -> str:
    person = totals.get("person", {}).get("epsilon")
    if person is not None:
        return f"{person:.3g}/person"
    held = [(unit, t["epsilon"]) for unit, t in totals.items() if t["spends"] and unit != "person"]
    return ", ".join(f"{eps:.3g}/{unit.split()[0]}" for unit, eps in held) if held else "none"
