"""The demo: the whole data path of DESIGN.md, on a simulated city or on a prepared TraceSet pair.

simulate (or load) -> split -> PPMTF.fit -> sample -> PD test -> evaluate -> report.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import InputError
from .traces import TraceSet, atomic_output

DEMO_MARKER = "demo.json"
SUMMARY = (("tp_tv", "TP-TV"), ("tp_tv_top50", "TP-TV-Top50"), ("tm_emd_x", "TM-EMD-X"), ("tm_emd_y", "TM-EMD-Y"),
           ("vf_tv", "VF-TV"), ("reid_rate", "re-identification rate"), ("mia_advantage", "MIA advantage"))


def run_demo(out: str | Path, users: int = 1000, seed: int = 0, data: str | Path | None = None,
             iterations: int = 100, traces_per_user: int = 1, k: int = 10, eta: float = 1.0,
             status=None, progress=None) -> dict:
    """Run the pipeline and write everything under ``out``; returns the summary.

    ``data``: a directory with ``train`` and ``test`` TraceSets (from ``locsynth prepare``);
    without it a city of ``users`` users is simulated and split in half. ``out`` is replaced
    when it holds an earlier demo (it has ``demo.json``); any other existing path is refused.
    ``status(text)`` announces each step; ``progress(done, total)`` reports Gibbs sweeps.
    """
    from .evaluate import evaluate
    from .synth import PPMTF

    out = Path(out)
    if out.exists() and not (out / DEMO_MARKER).is_file():
        raise InputError(f"{out} exists and is not a locsynth demo directory; choose another --out")
    say = status or (lambda _: None)
    if data is None:
        from .simulate import simulate

        say(f"simulating a city of {users} users")
        train, test = simulate(users, seed=seed).split(0.5, seed=seed)
        source = "simulated city"
    else:
        data = Path(data)
        train, test = TraceSet.load(data / "train"), TraceSet.load(data / "test")
        source = str(data)
    say(f"fitting PPMTF to {train.n_users} training users")
    model = PPMTF(iterations=iterations, seed=seed).fit(
        train, progress=None if progress is None else lambda it, total, _: progress(it, total))
    say("sampling synthetic traces")
    synthetic = model.sample(traces_per_user=traces_per_user, seed=seed + 1)
    say("plausible-deniability test")
    pd = model.pd_test(synthetic, k=min(k, model.n_users), eta=eta, candidates=32_000, seed=seed)
    say("evaluating utility and privacy")
    report = evaluate(train, test, synthetic, seed=seed, user_factors=model.factors_["A"])
    report.meta["pd_test"] = {"k": k, "eta": eta, "pass_rate": pd.pass_rate, "candidates": int(pd.candidates.size)}
    summary = {
        "source": source,
        "users": {"train": train.n_users, "test": test.n_users, "synthetic_traces": synthetic.n_traces},
        "metrics": {key: report.metrics[key] for key, _ in SUMMARY if key in report.metrics},
        "pd_pass_rate": pd.pass_rate,
        "epsilon": model.epsilon(),
        "rmse": model.rmse_[-1],
    }
    say("writing")
    with atomic_output(out, overwrite=True, directory=True) as tmp:
        train.save(tmp / "train")
        test.save(tmp / "test")
        model.save(tmp / "model")
        synthetic.save(tmp / "synthetic")
        report.to_json(tmp / "metrics.json")
        report.to_html(tmp / "report.html")
        (tmp / DEMO_MARKER).write_text(json.dumps(summary, indent=2, default=float))
    return summary
