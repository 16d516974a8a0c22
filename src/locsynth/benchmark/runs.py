"""``locsynth benchmark``: every applicable method on every prepared dataset, at every epsilon, with
independent repeats, scored by every metric group that applies (the seeds' own metrics, the
field's standard suite of metrics/standard.py, the attacks) into one ``results.csv`` and one
``leaderboard.html`` (evaluation/report/leaderboard.py).

    out/benchmark.json                     the settings (a rerun with other settings is refused)
    out/runs/DATASET/METHOD/EPS/REPEAT/    one run: run.json (what ran, sizes, seconds, ledger
                                           totals) and metrics.json (evaluate's report)
    out/results.csv                        one row per dataset, method, epsilon, repeat, metric
    out/leaderboard.html                   the page

A run whose directory is complete is not redone, so an interrupted benchmark resumes where it
stopped, and a rerun with more methods, epsilons or repeats adds only those.

Sizes. Query answers and pattern supports are counts, so every synthetic set scored has the real
reference (test) set's number of traces, or ``size``: synthesizers sample that many (a DP
method then spends nothing on its size: the size is the benchmark's public choice), methods that
re-use training users draw that many of them at random (seeded), and anonymizers' outputs (one
trace per training user) are subsampled to it.

Standard suite. Every run computes it in one flavour (``standard_flavour``, default ``adatrace``:
AdaTrace's Evaluation.java reproduced; metrics/standard.py), which ``benchmark.json`` records and
the leaderboard names.

Reference work. What evaluate computes from a dataset's real sets alone (the training column of
every metric, the test set's mined patterns, query answers, grids and distributions:
metrics.groups.Context.reference) is computed once per dataset and reused by every run: kept in
memory by the process that runs them, and saved beside the dataset's runs
(``out/runs/DATASET/references.pkl``, with a digest of the real sets it belongs to) for the other
Dask workers and for a resumed benchmark. Results equal those computed afresh in every run
(tests/test_benchmark.py).

Seeds. Repeat r fits with ``seed + r`` and samples with ``seed + r + 1``; the evaluation uses
``seed`` in every run, so all runs answer the same range queries. DP noise comes from OpenDP and is
not seeded.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..metrics.standard import check_flavour
from ..core.files import atomic_output, check_inputs, lock_file
from ..data.traces import TraceSet
from ..evaluation import references as kept_references
from ..evaluation.references import real_sets_digest

MARKER = "benchmark.json"
#: the settings a rerun must share with the runs already in ``out``
SHARED = ("size", "attacks", "seed", "params", "standard_flavour")


@dataclass(frozen=True)
class Run:
    """One cell of the benchmark: a method on a dataset at an epsilon (None: the method has no
    epsilon to sweep), one repeat."""

    dataset: str
    data: str
    method: str
    epsilon: float | None
    repeat: int

    @property
    def key(self) -> str:
        eps = "default" if self.epsilon is None else f"eps{self.epsilon:g}"
        return f"{self.dataset}/{self.method}/{eps}/{self.repeat}"

    @property
    def label(self) -> str:
        return f"{self.dataset} {self.method}{'' if self.epsilon is None else f' ε={self.epsilon:g}'} #{self.repeat}"


def sweeps_epsilon(method: str) -> bool:
    """Whether ``method`` takes one total ``epsilon`` (the benchmark sweeps it)."""
    from ..synth import registry

    return "epsilon" in registry.get(method).hyperparameters()


def parse_params(items: list[str]) -> dict[str, dict]:
    """``["ppmtf.iterations=20", ...]`` -> ``{"ppmtf": {"iterations": 20}}``: each value read and
    checked as its method declares it (synth/base.Hyperparameter), as ``fit`` reads --NAME VALUE."""
    from ..synth import registry

    out: dict[str, dict] = {}
    for item in items:
        name, sep, value = item.partition("=")
        method, dot, param = name.partition(".")
        if not sep or not dot:
            raise InputError(f"`param` takes METHOD.NAME=VALUE, got {item!r}")
        out.setdefault(method, {}).update(registry.get(method).parse_params({param: value}))
    return out


def plan(data: list[Path], methods: list[str] | None, epsilons: list[float], repeats: int
         ) -> tuple[list[Run], list[dict]]:
    """The runs, and the (dataset, method, reason) of every pair that cannot run, from the tags."""
    from ..synth import registry
    from ..synth.registry import skip_reason
    from ..core.validation import check_count, check_epsilon

    repeats = check_count(repeats, "repeats")
    epsilons = [check_epsilon(e) for e in epsilons]
    if not epsilons:
        raise InputError("give at least one epsilon")
    names = registry.names() if not methods else list(methods)
    for name in names:
        registry.method(name)                          # an unknown name stops here, naming the valid ones
    datasets = {}
    for path in data:
        path = Path(path)
        for part in ("train", "test"):
            if not (path / part).is_dir():
                raise InputError(f"{path} has no {part}/ set; give directories that 'locsynth prepare' wrote")
        if path.name in datasets:
            raise InputError(f"two datasets are named {path.name!r}; give directories with distinct names")
        datasets[path.name] = path
    runs, skipped = [], []
    for dataset, path in datasets.items():
        train = TraceSet.load(path / "train")
        for name in names:
            reason = skip_reason(name, train)
            if reason is not None:
                skipped.append({"dataset": dataset, "method": name, "reason": reason})
                continue
            for eps in (epsilons if sweeps_epsilon(name) else [None]):
                runs += [Run(dataset, str(path), name, eps, r) for r in range(repeats)]
    return runs, skipped


def run_one(run: Run, out: str, size: int | None, attacks: list[str], seed: int, params: dict,
            standard_flavour: str = "adatrace", keep_references: bool = True) -> dict:
    """Fit, sample (or transform), resize and evaluate one run (the standard suite in
    ``standard_flavour``); writes its directory under ``out/runs`` atomically and returns its
    run.json. ``keep_references``: reuse the dataset's reference work (:func:`references`)."""
    from ..synth import registry
    from ..evaluation.evaluate import evaluate

    train, test = TraceSet.load(Path(run.data) / "train"), TraceSet.load(Path(run.data) / "test")
    n = int(size or test.n_traces)
    cls, kind = registry.get(run.method), registry.method(run.method).kind
    hyper = cls.hyperparameters()
    given = {**({"seed": seed + run.repeat} if "seed" in hyper else {}), **params.get(run.method, {}),
             **({"epsilon": run.epsilon} if run.epsilon is not None else {})}
    model = cls(**given)
    clock = time.perf_counter()
    if kind == "anonymizer":
        synthetic, fitted = model.transform(train, seed=seed + run.repeat), time.perf_counter()
    else:
        model.fit(train)
        fitted = time.perf_counter()
        synthetic = _sample(model, n, train, seed + run.repeat + 1)
    synthetic = _resized(synthetic, n, seed + run.repeat)
    sampled = time.perf_counter()
    store, known, digest = (references(Path(out) / "runs" / run.dataset, train, test) if keep_references
                            else (None, 0, None))
    report = evaluate(train, test, synthetic, attacks=attacks, seed=seed, standard_flavour=standard_flavour,
                      references=store)
    if store is not None and len(store) > known:
        _save_references(Path(out) / "runs" / run.dataset, digest, store)
    ledger = synthetic.ledger
    record = {**asdict(run), "kind": kind, "params": given, "traces": int(synthetic.n_traces),
              "reference_traces": int(test.n_traces),
              "totals": ledger.totals() if ledger else {},
              "seconds": {"fit": round(fitted - clock, 3), "sample": round(sampled - fitted, 3),
                          "evaluate": round(time.perf_counter() - sampled, 3)}}
    where = Path(out) / "runs" / run.key
    where.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(where, overwrite=True, directory=True, mine=True) as tmp:
        report.to_json(tmp / "metrics.json")
        (tmp / "run.json").write_text(json.dumps(record, indent=2, default=float))
    return record


#: this process' reference stores, by the digest of the real sets they belong to
_REFERENCES: dict[str, dict] = {}
REFERENCES_FILE = "references.pkl"


def references(where: Path, train: TraceSet, test: TraceSet) -> tuple[dict, int, str]:
    """The store of the dataset's reference work (evaluate's ``references``), its size now and the
    digest of the real sets it belongs to: this process' own, else the one saved in ``where`` when it
    belongs to these real sets, else empty."""
    digest = real_sets_digest(train, test)
    store = _REFERENCES.get(digest)
    if store is None:
        store = _REFERENCES[digest] = kept_references.load(Path(where) / REFERENCES_FILE, digest)
    return store, len(store), digest


def _save_references(where: Path, digest: str, store: dict) -> None:
    """Write the store beside the dataset's runs, whole or not at all (evaluation/references.py)."""
    kept_references.save(Path(where) / REFERENCES_FILE, digest, store)


def _sample(model, n: int, train: TraceSet, seed: int) -> TraceSet:
    """n traces: n virtual users, or n training users drawn at random (all of them when n is larger)."""
    if model.tags.virtual_users:
        return model.sample(n, seed=seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(24,)))
    users = np.sort(rng.choice(train.n_traces, size=min(n, train.n_traces), replace=False))
    return model.sample(users=users, seed=seed)


def _resized(synthetic: TraceSet, n: int, seed: int) -> TraceSet:
    """At most n traces: a seeded random subset when there are more."""
    if synthetic.n_traces <= n:
        return synthetic
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(25,)))
    return synthetic.select_users(np.sort(rng.choice(synthetic.n_traces, size=n, replace=False)))


def done(out: Path, run: Run) -> bool:
    return (out / "runs" / run.key / "run.json").is_file()


#: what a setting older benchmarks did not record shows as (the standard suite before its flavours)
_UNRECORDED = "not recorded (an older benchmark)"


def _check_settings(out: Path, settings: dict) -> None:
    """Write ``benchmark.json``, or check that an existing one has the same shared settings."""
    marker = out / MARKER
    if out.exists() and not marker.is_file() and any(out.iterdir()):
        raise InputError(f"{out} exists and is not a locsynth benchmark directory; choose another `out`")
    if marker.is_file():
        old = json.loads(marker.read_text())
        differ = [k for k in SHARED if old.get(k) != settings.get(k)]
        if differ:
            raise InputError(f"{out} holds a benchmark with other settings ({', '.join(f'{k}: {old.get(k, _UNRECORDED)!r}' for k in differ)}); "
                             f"use another `out` or the same settings to resume it")
    try:
        out.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(settings, indent=2))
    except OSError as exc:
        raise InputError(f"cannot write to {out}: {exc.strerror}") from None


def run_benchmark(data: list[Path], out: str | Path, *, methods: list[str] | None = None,
                  epsilons=(0.5, 1.0, 2.0), repeats: int = 3, size: int | None = None, attacks=("reid", "mia"),
                  seed: int = 0, params: dict | None = None, client=None, standard_flavour: str = "adatrace",
                  log=None, progress=None, keep_references: bool = True) -> pd.DataFrame:
    """Run what is not done yet (serially, or on ``client``'s Dask cluster, one run per task), then
    write results.csv and leaderboard.html; returns the results.

    ``standard_flavour``: how every run computes the standard suite (metrics/standard.py); a
    benchmark directory holds one flavour, so a rerun with another is refused.

    ``keep_references``: compute what depends only on a dataset's real sets once for all its runs
    (module docstring); False recomputes it in every run (the same results, slower).

    ``log(line)`` gets what a user should read (the pairs skipped and why, the runs already done,
    each run as it finishes); ``progress(done, total, running)`` counts the runs and names what
    is running.
    """
    out = Path(out)
    params = params or {}
    if size is not None and (not isinstance(size, int) or size < 1):
        raise InputError(f"size must be a positive integer, got {size!r}")
    check_flavour(standard_flavour)
    runs, skipped = plan([Path(d) for d in data], methods, list(epsilons), repeats)
    settings = {"size": size, "attacks": list(attacks), "seed": seed, "params": params,
                "standard_flavour": standard_flavour}
    check_inputs(out, data)
    _check_settings(out, settings)
    with folder_lock(out):
        return _run_planned(out, runs, skipped, size, attacks, seed, params, client, standard_flavour, log, progress,
                            keep_references)


def folder_lock(out: Path):
    """Hold ``out/.lock`` (core/files.lock_file) while a benchmark writes to ``out``: a second
    benchmark on the same folder is refused in one error instead of running every job again; a
    lock left by a process that no longer runs, or that is not locsynth, is taken over."""
    out.mkdir(parents=True, exist_ok=True)
    return lock_file(out / ".lock", f"{out} (a benchmark)")


def _run_planned(out, runs, skipped, size, attacks, seed, params, client, standard_flavour, log, progress,
                 keep_references) -> pd.DataFrame:
    from ..core.progress import resolve

    say, count = log or (lambda _: None), resolve(progress, "benchmark") or (lambda done, total, running: None)
    for skip in skipped:
        say(f"{skip['dataset']}: {skip['method']} skipped: {skip['reason']}")
    todo = [run for run in runs if not done(out, run)]
    if len(todo) < len(runs):
        say(f"{len(runs) - len(todo)} of {len(runs)} runs already done in {out}; running the other {len(todo)}")
    finished = len(runs) - len(todo)
    running = todo[0].label if client is None and todo else f"{len(todo)} runs on the cluster"
    count(finished, len(runs), running)
    for record in _execute(todo, out, size, list(attacks), seed, params, standard_flavour, client, keep_references):
        finished += 1
        seconds = sum(record["seconds"].values())
        say(f"[{finished}/{len(runs)}] {Run(**{k: record[k] for k in Run.__dataclass_fields__}).label}: "
            f"{record['traces']} traces, {seconds:.1f} s")
        if client is None and finished < len(runs):
            running = todo[finished - len(runs) + len(todo)].label
        count(finished, len(runs), running)
    results = collect(out, runs)
    write_outputs(out, results, runs, skipped, standard_flavour)
    return results


def _execute(todo: list[Run], out: Path, size, attacks, seed, params, standard_flavour, client,
             keep_references: bool = True):
    """Yield each run's record as it finishes: in order here, or as the cluster completes them."""
    if client is None:
        for run in todo:
            yield run_one(run, str(out), size, attacks, seed, params, standard_flavour, keep_references)
        return
    from distributed import as_completed

    futures = [client.submit(run_one, run, str(out), size, attacks, seed, params, standard_flavour,
                             keep_references, pure=False)
               for run in todo]
    for future in as_completed(futures):
        yield future.result()


def collect(out: Path, runs: list[Run]) -> pd.DataFrame:
    """results.csv's rows for ``runs``: dataset, method, kind, epsilon, repeat, metric, value."""
    from ..evaluation.report.compare import method_kind

    rows = []
    for run in runs:
        where = Path(out) / "runs" / run.key
        record, metrics = (_read_run_file(where / name) for name in ("run.json", "metrics.json"))
        epsilon = run.epsilon if run.epsilon is not None else _claimed(record["totals"])
        for metric, entry in metrics.items():
            if metric.startswith("_") or not isinstance(entry, dict):
                continue
            value = entry.get("synthetic")
            rows.append({"dataset": run.dataset, "method": run.method, "kind": method_kind(run.method),
                         "epsilon": epsilon, "swept": run.epsilon is not None, "repeat": run.repeat,
                         "metric": metric, "value": math.nan if value is None else float(value)})
    return pd.DataFrame(rows, columns=["dataset", "method", "kind", "epsilon", "swept", "repeat", "metric", "value"])


def _read_run_file(file: Path) -> dict:
    """A finished run's JSON file; one damaged (cut short, edited) is an InputError naming it and
    how to redo that run alone."""
    try:
        data = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{file} is damaged ({exc}): delete its folder {file.parent} and rerun the same "
                         "command, which redoes that run alone") from None
    if not isinstance(data, dict):
        raise InputError(f"{file} is damaged (not a JSON object): delete its folder {file.parent} and rerun the "
                         "same command, which redoes that run alone")
    return data


def _claimed(totals: dict) -> float | None:
    """The epsilon a method without a swept epsilon claims: its ledger's per-person headline where it
    is finite, else its largest finite total per unit; None without one."""
    person = totals.get("person", {}).get("epsilon")
    if person is not None:
        return float(person)
    held = [t["epsilon"] for t in totals.values() if t.get("spends") and not t.get("bounds_only")
            and t["epsilon"] is not None]
    return float(max(held)) if held else None


def write_outputs(out: Path, results: pd.DataFrame, runs: list[Run], skipped: list[dict],
                  standard_flavour: str = "adatrace") -> None:
    """results.csv and leaderboard.html, each written whole or not at all."""
    from ..evaluation.report.leaderboard import leaderboard_html

    with atomic_output(out / "results.csv", overwrite=True, directory=False, mine=True) as tmp:
        results.to_csv(tmp, index=False)
    with atomic_output(out / "leaderboard.html", overwrite=True, directory=False, mine=True) as tmp:
        tmp.write_text(leaderboard_html(results, skipped=skipped, standard_flavour=standard_flavour))
