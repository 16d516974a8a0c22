"""The demo: every registered method through the data path of DESIGN.md, on the same users.

simulate (or load) -> split -> for each method: fit -> sample (-> PD test) or transform ->
evaluate against the same test users -> one table, one comparison page, a report per method.

Which methods run is decided by their capability tags: a method that needs a friend graph or
location categories the data lacks, or whose optional dependency is missing, is listed as
skipped with the reason (and the extra to install), so a method joins the comparison by
registering.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..core.errors import InputError
from ..core.progress import reporter
from ..synth.registry import skip_reason
from ..core.files import MARKER, atomic_output
from ..data.traces import TraceSet

DEMO_MARKER = "demo.json"
#: the demo table's columns: metric key and a short header (report.html has every metric)
SUMMARY = (("tp_tv", "TP-TV"), ("tm_emd_x", "EMD-X"), ("tm_emd_y", "EMD-Y"), ("reid_rate", "re-id"),
           ("mia_advantage", "MIA adv"))


def run_demo(out: str | Path, users: int = 1000, seed: int = 0, data: str | Path | None = None,
             iterations: int = 100, traces_per_user: int = 1, k: int = 10, eta: float = 1.0,
             methods: list[str] | None = None, status=None, progress=None) -> dict:
    """Run every method (or ``methods``) and write everything under ``out``; returns the summary.

    ``data``: a directory with ``train`` and ``test`` TraceSets (from ``locsynth prepare``);
    without it a city of ``users`` users is simulated and split in half. ``iterations`` are
    PPMTF's Gibbs sweeps. ``out`` is replaced when it holds an earlier demo (it has
    ``demo.json``); any other existing path is refused. ``progress(done, total, status="")``
    (core/progress.py) announces each step (``progress(0, None, step)``) and counts long ones;
    ``status(text)``, the earlier way to hear of the steps, still works.
    """
    from ..synth import registry
    from ..evaluation.evaluate import evaluate
    from ..evaluation.report import compare, compare_html, tradeoff_plot

    out = Path(out)
    if out.exists() and not (out / DEMO_MARKER).is_file():
        raise InputError(f"{out} exists and is not a locsynth demo directory; choose another `out`")
    announce = reporter(progress)
    say = status or (lambda text: announce(0, None, text))
    if data is None:
        from ..data.simulate import simulate

        say(f"simulating a city of {users} users")
        train, test = simulate(users, seed=seed).split(0.5, seed=seed)
        source = "simulated city"
    else:
        data = Path(data)
        train, test = TraceSet.load(data / "train"), TraceSet.load(data / "test")
        source = str(data)
    chosen = registry.names() if methods is None else list(methods)
    for name in chosen:
        registry.method(name)                          # an unknown name stops here, naming the valid ones
    skipped = {name: reason for name in chosen if (reason := skip_reason(name, train)) is not None}
    runs: dict[str, dict] = {}
    # a demo folder of an earlier version has its own marker but not the one core/files reads
    with atomic_output(out, overwrite=True, directory=True, inputs=[data],
                       mine=(out / DEMO_MARKER).is_file() and not (out / MARKER).is_file()) as tmp:
        train.save(tmp / "train")
        test.save(tmp / "test")
        for name in (n for n in chosen if n not in skipped):
            start = time.perf_counter()
            synthetic, model, pd = _run_method(name, train, seed, iterations, traces_per_user, k, eta, say, announce)
            say(f"{name}: evaluating utility and privacy")
            factors = getattr(model, "factors_", {}).get("A") if model is not None else None
            report = evaluate(train, test, synthetic, seed=seed, user_factors=factors)
            if pd is not None:
                report.meta["pd_test"] = pd.summary()
            where = tmp / name
            where.mkdir()
            if model is not None:
                model.save(where / "model")
            synthetic.save(where / "synthetic")
            if pd is not None:
                pd.save(where / "pdtest", synthetic, seed=seed)
            report.save(where / "evaluation")
            ledger = synthetic.ledger
            runs[name] = {"kind": registry.method(name).kind, "metrics": report.metrics,
                          "pd_pass_rate": None if pd is None else pd.pass_rate,
                          "privacy_tests": synthetic.info.get("fakes"),
                          "ledger": ledger.describe() if ledger else [],
                          "totals": ledger.totals() if ledger else {},
                          "traces": synthetic.n_traces, "seconds": round(time.perf_counter() - start, 2)}
        say("comparing")
        from ..evaluation.report.labels import attack_keys, utility_keys

        shown = {*utility_keys(), *attack_keys()}
        table = compare({name: {k: v for k, v in run["metrics"].items() if k in shown} for name, run in runs.items()})
        # the training and uniform methods stand for the baselines when they ran
        table = table.drop(index=[row for row, method in (("Training", "training"), ("Uniform", "uniform"))
                                  if method in runs])
        table.to_csv(tmp / "compare.csv")
        notes = _notes(runs, skipped)
        png = None
        attacked = [key for key in ("reid_rate", "mia_advantage") if key in table.columns]
        if "tp_tv" in table.columns and attacked and len(table[["tp_tv", *attacked]].dropna(how="all")):
            png = tradeoff_plot(table, utility="tp_tv", privacy=attacked[0])
            (tmp / "tradeoff.png").write_bytes(png)
        else:
            notes.append("No method here has both TP-TV and an attack's result, so there is no trade-off plot.")
        (tmp / "report.html").write_text(compare_html(
            table, png, title=f"locsynth demo: {len(runs)} methods on {source}", notes=notes,
            links={name: f"{name}/evaluation/report.html" for name in runs}))
        summary = {"source": source, "users": {"train": train.n_users, "test": test.n_users},
                   "methods": runs, "skipped": skipped, "k": k, "eta": eta}
        (tmp / DEMO_MARKER).write_text(json.dumps(summary, indent=2, default=float))
    return summary


def _run_method(name, train, seed, iterations, traces_per_user, k, eta, say, progress):
    """(synthetic set, fitted model or None, PD result or None) of one method."""
    from ..synth import registry

    kind = registry.get(name)
    params = {"iterations": iterations, "seed": seed}
    model = kind(**{p: v for p, v in params.items() if p in kind.hyperparameters()})
    if registry.method(name).kind == "anonymizer":
        say(f"{name}: anonymizing the training traces")
        return model.transform(train, seed=seed), None, None
    say(f"{name}: fitting to {train.n_users} training users")
    model.fit(train, progress=lambda done, total, status="": progress(done, total))    # the step's text stays
    say(f"{name}: sampling")
    synthetic = model.sample(seed=seed + 1, traces_per_user=traces_per_user if model.several_traces else 1)
    pd = None
    if kind.tags.pd_test:
        say(f"{name}: plausible-deniability test")
        pd = model.pd_test(synthetic, k=min(k, model.n_users), eta=eta, candidates=32_000, seed=seed)
    return synthetic, model, pd


def _notes(runs: dict, skipped: dict) -> list[str]:
    from ..evaluation.report.compare import KINDS, method_kind

    notes = []
    for name, run in sorted(runs.items(), key=lambda item: KINDS.index(method_kind(item[0]))):
        held = [(f"epsilon = {t['epsilon']:.3g} per {unit}" if t["epsilon"] is not None else f"no bound per {unit}")
                for unit, t in run["totals"].items() if t["spends"]]
        bounds = any(t["bounds_only"] for t in run["totals"].values())
        guarantee = "; ".join(held) if held else "no differential-privacy guarantee" + (
            " (its paper's bound needs assumptions not met here; see its report)" if bounds else "")
        pd = f"; PD test pass rate {run['pd_pass_rate']:.3f}" if run["pd_pass_rate"] is not None else ""
        tests = run.get("privacy_tests")
        if tests and tests.get("privacy_test"):
            pd += (f"; {tests['passed']} fakes passed the privacy tests in {tests['tries']} tries "
                   f"(pass rate {tests['pass_rate']:.3f})")
        notes.append(f"{name} ({run['kind']}, {run['traces']} traces, {run['seconds']:.1f} s): {guarantee}{pd}.")
    notes += [f"{name}: skipped, {reason}." for name, reason in skipped.items()]
    return notes
