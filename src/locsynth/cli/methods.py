"""``locsynth methods``, ``fit``, ``sample``, ``pdtest`` and ``anonymize``: the registered methods
and their steps. Parsing and printing only; the work is in locsynth.synth and locsynth.anonymize."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import List, Optional

import typer

from ..core.errors import InputError
from .common import (PARAMS, SCHEDULER_HELP, WORKERS_HELP, _hyperparameters, _method_args, _claim,
                     _table, console, on_bar, progress_bar, reports_errors, say, small_data)
from .root import app


@app.command()
@reports_errors
def methods(
    name: Optional[str] = typer.Argument(None, help="A method: show its hyperparameters."),
):
    """The registered synthesizers and anonymizers, their capability tags and hyperparameters."""
    from ..synth import registry

    from rich.markup import escape

    if name is None:
        listed = sorted(registry.names(), key=lambda n: (registry.KINDS.index(registry.method(n).kind), n))
        console().print(_methods_table(listed))
        for n in listed:
            if registry.method(n).missing():
                say(f"{n} is not installed: pip install 'locsynth[{registry.method(n).extra}]'")
        say("locsynth methods NAME shows a method's tags and hyperparameters.")
        return
    kind = registry.get(name)
    doc = inspect.getdoc(kind) or ""
    say(f"{name} ({registry.method(name).kind}): {doc.splitlines()[0] if doc else ''}")
    say(f"tags: {', '.join(kind.tags.names()) or 'none'}")
    rows = [["--" + p.replace("_", "-"), repr(h.default), h.help] for p, h in kind.declarations().items()]
    verb = "fit" if registry.method(name).kind == "synthesizer" else "anonymize"
    _table(f"hyperparameters of {name} (locsynth {verb} {name} ... --NAME VALUE, or NAME=VALUE in --param and specs)",
           ["option", "default", "what it is"], rows)
    for step, options in (("fit", getattr(kind, "fit_options", {})), ("sample", getattr(kind, "sample_options", {}))):
        if options:
            _table(f"{step} options of {name} (locsynth {step} ... --NAME VALUE)", ["option", "default", "what it does"],
                   [["--" + k.replace("_", "-"), repr(spec[0]), spec[1]] for k, spec in options.items()])


def _methods_table(names: list[str]):
    """The registered methods, synthesizers then anonymizers: one line a method, its description cut
    to the terminal's width (locsynth methods NAME says the rest)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from ..synth import registry

    table = Table(title="locsynth methods", box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left", expand=True)
    table.add_column("method", no_wrap=True, min_width=max(map(len, names)))
    table.add_column("installed", no_wrap=True, min_width=len("installed"))
    table.add_column("what it is", no_wrap=True, overflow="ellipsis", ratio=1)
    kind = None
    for n in names:
        m = registry.method(n)
        if m.kind != kind:
            if kind is not None:
                table.add_section()
            table.add_row(f"[dim]{m.kind}s[/dim]", "", "")
            kind = m.kind
        table.add_row(n, "no" if m.missing() else "yes", escape(_what_it_is(n)))
    return table


def _what_it_is(name: str) -> str:
    """A method's summary without the name it starts with when that is the method's own
    ('AdaTrace: density-aware grid ...' under adatrace)."""
    from ..synth import registry

    summary = registry.method(name).summary
    head, sep, rest = summary.partition(": ")
    same = "".join(c for c in head.lower() if c.isalnum()) == "".join(c for c in name if c.isalnum())
    return rest if sep and same else summary


@app.command(context_settings=PARAMS)
@reports_errors
def fit(
    ctx: typer.Context,
    method: str = typer.Argument(..., help="A synthesizer (locsynth methods lists them)."),
    train: Path = typer.Argument(..., help="Training TraceSet."),
    out: Path = typer.Option(..., "--out", "-o", help="Model directory to write."),
    param: List[str] = typer.Option([], "--param", "-p", metavar="NAME=VALUE",
                                    help="A hyperparameter; also --NAME VALUE (e.g. --alpha 200 --iterations 100)."),
    seed: int = typer.Option(0, help="Random seed of the method's non-DP randomness. A DP method's noise "
                                       "comes from OpenDP's system randomness: two DP fits differ "
                                       "whatever the seed (a saved model samples reproducibly)."),
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
    _claim(out, overwrite=overwrite, inputs=[train])
    from ..data.partitioned import PartitionedTraceSet, load_traces

    ts = load_traces(train)
    mismatch = kind.tags.mismatch(ts, method)
    if mismatch:
        say(f"note: {mismatch}; fitting anyway")
    model = kind(**params)
    by_partitions = isinstance(ts, PartitionedTraceSet) and kind.partitions
    if (workers is not None or scheduler is not None) and "fit" not in kind.distributed and not by_partitions:
        raise InputError(f"--workers and --scheduler do not apply to fitting {method}"
                         + (" (the trip methods fit a partitioned set on a cluster)" if kind.partitions else ""))
    from ..core.parallel import executor

    with executor(workers, scheduler) as client, progress_bar() as bar, small_data() as warned:
        task = bar.add_task(f"fitting {method}", total=None)
        model.fit(ts, progress=on_bar(bar, task, f"fitting {method}"), client=client, **options)
    facts = ", ".join(f"{k} {v}" for k, v in model.summary().items())
    say(f"fitted {method}" + (f": {facts}" if facts else ""))
    for line in model.ledger_.describe():
        say(f"privacy: {line}")
    if getattr(model, "noise_", None):
        from ..privacy.noise import describe_noise

        say(f"noise: {describe_noise(model.noise_)}")
    for message in warned:
        say(f"warning: {message}")
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
    partition_trips: Optional[int] = typer.Option(None, metavar="N", help="Write a partitioned set of N trips a "
                                                  "partition, sampled in parallel, each from the seed and its "
                                                  "number (the trip methods; for sets larger than memory)."),
    workers: Optional[int] = typer.Option(None, metavar="N", help=WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, metavar="ADDRESS", help=SCHEDULER_HELP),
    overwrite: bool = typer.Option(False, help="Replace OUT if it exists."),
):
    """Generate synthetic traces from a fitted model.

    Any sample option the method declares is an option too: --NAME VALUE (locsynth methods METHOD
    lists them, e.g. --instants N, --home-regions)."""
    from ..synth.base import Synthesizer

    _claim(out, overwrite=overwrite, inputs=[model_dir])
    model = Synthesizer.load(model_dir)
    _, options = _method_args(type(model), ctx.args, [], model.sample_options, "sample option")
    if partition_trips is not None:
        return _sample_partitions(model, out, users, days, seed, partition_trips, traces_per_user, options,
                                  workers, scheduler, overwrite)
    if (workers is not None or scheduler is not None) and "sample" not in model.distributed:
        raise InputError(f"--workers and --scheduler do not apply to {model.name}"
                         + (" but with --partition-trips" if model.partitions else ""))
    from ..core.parallel import executor

    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task(f"sampling from {model.name} (users)", total=None)
        syn = model.sample(users, days=days, seed=seed, traces_per_user=traces_per_user or 1, client=client,
                           progress=lambda done, total: bar.update(task, completed=done, total=total), **options)
    syn.save(out, overwrite=overwrite)
    say(f"wrote {out}: {syn.n_traces} traces of {syn.n_users} users, {syn.n_events} events")
    for line in model.describe_sample(syn):
        say(line)


def _sample_partitions(model, out: Path, users, days: int, seed: int, partition_trips: int, traces_per_user,
                       options: dict, workers, scheduler, overwrite: bool) -> None:
    """``sample --partition-trips``: the synthetic trips as partitions (synth/partitioned.py)."""
    from ..core.parallel import executor
    from ..synth.partitioned import sample_partitioned

    if options or (traces_per_user or 1) != 1:
        raise InputError("--partition-trips samples one trip a virtual user, with no sample option")
    with executor(workers, scheduler) as client, progress_bar() as bar:
        task = bar.add_task(f"sampling from {model.name} by partitions (trips)", total=None)
        syn = sample_partitioned(model, out, users, partition_trips=partition_trips, days=days, seed=seed,
                                 client=client, overwrite=overwrite,
                                 progress=lambda done, total: bar.update(task, completed=done, total=total))
    say(f"wrote {out}: {syn.n_traces} trips in {syn.n_partitions} partitions, {syn.n_events} events")


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

    _claim(out, overwrite=overwrite, inputs=[model_dir, synthetic])
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
    _claim(out, overwrite=overwrite, inputs=[traces])
    from ..data.traces import TraceSet

    result = anonymizer.transform(TraceSet.load(traces), seed=seed)
    for line in result.ledger.describe():
        say(f"privacy: {line}")
    result.save(out, overwrite=overwrite)
    say(f"wrote {out}: {result.n_traces} traces, {result.n_events} events")
