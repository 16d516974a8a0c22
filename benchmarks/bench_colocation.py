"""The co-location synthesizer (paper 000) on Gowalla (friends) and Foursquare NYC (categories):
the paper's Figures 7-15, averaged over 5 runs as in the paper, and the speed of fit and
generation with their growth in users, in one run.

Data, in the paper's shape (§5.1): the 100 most visited POIs, hourly instants of one day (every
check-in folded onto its hour of the day, |T| = 24), local time.
- Gowalla: the 1,000-user slice with its friend graph (814 users check in at those POIs).
- Foursquare NYC has no friend graph: there Q counts co-locations between any two users
  (counts.colocation_counts(pairs="all")) for Figures 8-11 on its category hierarchy (root > 9
  Foursquare top-level categories > venue categories > POI); p' and generation need friends and
  run on Gowalla only. Figures 8-11 also run on Gowalla, whose "categories" are the top level of
  its POI quad-tree (4 quadrants of 25 POIs).
- The paper's scale: paper 000 had 8,357 users on 100 POIs, our Gowalla slice 814. Figures 12-15
  run again on a simulated city of 8,357 users and 100 POIs with its friend graph (data/simulate.py),
  and Figure 8's noise alone is computed for the paper's hierarchy (Table 2: 4 categories of
  42, 32, 9 and 17 POIs under 12 sub-categories) from privelet.top_level_variance.

Figures: 7 |p - p'| against epsilon_1; 8-9 per-category MAE / MSE of Q' against c at
epsilon_2 = 1, Privelet against Laplace; 10-11 the same against epsilon_2 at c = 5; 12-15
population and transition MAE / MSE against theta (epsilon_1 = epsilon_2 = 1, c = 5) for the
co-location synthesizer, TPM and Uniform. Written as PNGs and one HTML page under --out.

    python benchmarks/bench_colocation.py [--data ../shared/data] [--out /tmp/locsynth-colocation]
"""

from __future__ import annotations

import argparse
import textwrap
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from locsynth.metrics.colocation import friend_colocations, population_error, transition_error
from locsynth.data.prepare import prepare
from locsynth.evaluation.report import plots
from locsynth.data.simulate import simulate
from locsynth.synth.baselines import Uniform
from locsynth.metrics.colocation import colocation_counts
from locsynth.synth.colocation.counts import category_matrix, noisy_counts
from locsynth.synth.colocation.friendship import friendship_probability, noisy_friendship_probability
from locsynth.synth.colocation.model import CoLocation
from locsynth.privacy.privelet import generalized_sensitivity, top_level_variance
from locsynth.privacy.hierarchy import Hierarchy
from locsynth.synth.tpm import TPM

RUNS = 5
EPS1 = (0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0)
TRIMS = (1, 5, 10, 15, 20)
EPS2 = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
THETAS = (1, 5, 10, 50, 100, 500, 1000, 5000)
PAPER_USERS = 8_357
#: POIs per sub-category of paper 000's Table 2 (100 POIs; the split within a category is ours)
PAPER_TABLE2 = {"travel & transport": [9, 9, 8, 8, 8], "shop & service": [8, 8, 8, 8],
                "arts & entertainment": [9], "professional & other places": [9, 8]}


def load(data: Path, tmp: Path):
    gowalla = prepare(data / "gowalla-vldb17" / "Gowalla_3", "gowalla", tmp / "gowalla", pois=100, instant="1h",
                      friends=data / "gowalla-vldb17" / "Gowalla_1", fold_days=True,
                      timezone="America/Chicago")[""]
    nyc = prepare(data / "foursquare-nyc-tsmc2014", "foursquare", tmp / "nyc", pois=100, instant="1h",
                  fold_days=True, timezone="America/New_York")[""]
    return gowalla, nyc


def figure7(gowalla) -> dict:
    n, m = gowalla.n_traces, int(gowalla.friends.shape[0])
    p = friendship_probability(m, n)
    return {eps: float(np.abs(noisy_friendship_probability(m, n, eps, size=RUNS) - p).mean()) for eps in EPS1}


def top_level(h: Hierarchy) -> np.ndarray:
    """Each leaf's ancestor just below the root (the quad-tree's "category")."""
    node = np.arange(h.n_leaves)
    while (up := h.parent[node] != h.root).any():
        node = np.where(up, h.parent[node], node)
    return node


def category_errors(traces, trim: int, eps: float, mechanism: str) -> tuple[float, float]:
    """Mean over RUNS of the per-category MAE and MSE of Q' against the untrimmed Q*."""
    categories = traces.space.top_category()
    if categories is None:
        categories = top_level(traces.space.hierarchy())
    truth = category_matrix(colocation_counts(traces, None, "all"), categories)[1]
    counts = colocation_counts(traces, trim, "all")
    h = traces.space.hierarchy()
    errs = [(category_matrix(noisy_counts(counts, eps, trim, mechanism, h), categories)[1] - truth)
            for _ in range(RUNS)]
    return float(np.mean([np.abs(e).mean() for e in errs])), float(np.mean([(e ** 2).mean() for e in errs]))


def figures8_11(traces) -> dict:
    out = {"by_c": {}, "by_eps": {}}
    for mech in ("privelet", "laplace"):
        out["by_c"][mech] = {c: category_errors(traces, c, 1.0, mech) for c in TRIMS}
        out["by_eps"][mech] = {e: category_errors(traces, 5, e, mech) for e in EPS2}
    return out


def paper_shape_noise(c: int = 5, eps: float = 1.0) -> dict:
    """Figure 8's noise alone on the paper's Table 2 hierarchy: the standard deviation of each
    category's sum under Privelet and under Laplace on its POIs."""
    cats = np.repeat(list(PAPER_TABLE2), [sum(v) for v in PAPER_TABLE2.values()])
    subs = np.concatenate([np.repeat([f"{k}/{i}" for i in range(len(v))], v) for k, v in PAPER_TABLE2.items()])
    h = Hierarchy.from_levels(cats, subs)
    sd = float(np.sqrt(top_level_variance(h, eps, c)[0]))
    return {k: (sum(v), sd, float(np.sqrt(2 * sum(v)) * c / eps)) for k, v in PAPER_TABLE2.items()} | {
        "rho": generalized_sensitivity(h)}


def mean_errors(real, sets) -> dict:
    """Population and transition MAE / MSE of each synthetic set against ``real``, averaged."""
    pe = [population_error(real, s) for s in sets]
    te = [transition_error(real, s) for s in sets]
    return {"pop_mae": float(np.mean([d["mae"] for d in pe])), "pop_mse": float(np.mean([d["mse"] for d in pe])),
            "tm_mae": float(np.mean([d["mae"] for d in te])), "tm_mse": float(np.mean([d["mse"] for d in te]))}


def figures12_15(real) -> dict:
    """Proposal against theta, TPM and Uniform, RUNS runs each: one fit per run, every theta
    sampled from it (theta only enters generation)."""
    models = [CoLocation(seed=r).fit(real) for r in range(RUNS)]
    out = {"proposal": {}, "friends": {}}
    for theta in THETAS:
        for m in models:
            m.theta = theta
        sets = [m.sample(seed=r) for r, m in enumerate(models)]
        out["proposal"][theta] = mean_errors(real, sets)
        together = [friend_colocations(s, seed=r) for r, s in enumerate(sets)]
        out["friends"][theta] = (float(np.mean([t["friends_per_pair"] for t in together])),
                                 float(np.mean([t["non_friends_per_pair"] for t in together])))
    out["tpm"] = mean_errors(real, [TPM(seed=r).fit(real).sample(seed=r) for r in range(RUNS)])
    out["uniform"] = mean_errors(real, [Uniform().fit(real).sample(seed=r) for r in range(RUNS)])
    return out


def speed(gowalla, tmp: Path) -> dict:
    """Library fit + sample on Gowalla and on simulated cities of n and 2n users; the commands."""
    out = {}
    CoLocation().fit(gowalla).sample(seed=0)                       # compile the kernels
    t0 = time.perf_counter()
    model = CoLocation().fit(gowalla)
    t1 = time.perf_counter()
    model.sample(seed=1)
    t2 = time.perf_counter()
    out["gowalla"] = (t1 - t0, t2 - t1)
    gowalla.save(tmp / "gowalla-set", overwrite=True)
    cmd = [sys.executable, "-m", "locsynth.cli"]
    t0 = time.perf_counter()
    subprocess.run(cmd + ["fit", "colocation", str(tmp / "gowalla-set"), "--out", str(tmp / "model"), "--overwrite"],
                   check=True, capture_output=True)
    t1 = time.perf_counter()
    subprocess.run(cmd + ["sample", str(tmp / "model"), "--out", str(tmp / "syn"), "--overwrite"], check=True,
                   capture_output=True)
    t2 = time.perf_counter()
    out["commands"] = (t1 - t0, t2 - t1)
    for n in (5_000, 10_000):
        city = simulate(n, seed=0)
        t0 = time.perf_counter()
        m = CoLocation().fit(city)
        t1 = time.perf_counter()
        syn = m.sample(seed=1)
        out[n] = (t1 - t0, time.perf_counter() - t1, city.n_events, int(city.friends.shape[0]),
                  syn.info["friendships"], syn.info["colocations_placed"])
    return out


def write_page(out: Path, f7, f8s: dict, f12s: dict, shape: dict) -> Path:
    figs = []

    def line_plot(title, xlabel, ylabel, series, logx=True, logy=False):
        fig = plots.new_figure(4.2, 3.0)
        ax = fig.subplots()
        for label, xs, ys in series:
            ax.plot(xs, ys, marker="o", markersize=3, label=label)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_title(textwrap.fill(title, 60), fontsize=7)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, frameon=False)
        png = plots.to_png(fig)
        name = "-".join("".join(ch for ch in title.lower() if ch.isalnum() or ch == " ").split()) + ".png"
        (out / name).write_bytes(png)
        figs.append((title, plots.data_uri(png)))

    line_plot("Fig. 7. |p - p'| against epsilon_1 (Gowalla)", "epsilon_1", "absolute error",
              [("p'", list(f7), list(f7.values()))], logy=True)
    for where, f8 in f8s.items():
        for i, err in enumerate(("MAE", "MSE")):
            line_plot(f"Fig. {8 + i}. {err} of the per-category matrix against c ({where}, epsilon_2 = 1)", "c", err,
                      [(m, TRIMS, [f8["by_c"][m][c][i] for c in TRIMS]) for m in ("privelet", "laplace")], logx=False)
        for i, err in enumerate(("MAE", "MSE")):
            line_plot(f"Fig. {10 + i}. {err} of the per-category matrix against epsilon_2 ({where}, c = 5)",
                      "epsilon_2", err, [(m, EPS2, [f8["by_eps"][m][e][i] for e in EPS2])
                                         for m in ("privelet", "laplace")])
    for where, f12 in f12s.items():
        for k, (key, what) in enumerate((("pop_mae", "population MAE"), ("pop_mse", "population MSE"),
                                         ("tm_mae", "transition MAE"), ("tm_mse", "transition MSE"))):
            line_plot(f"Fig. {12 + k}. {what} against theta ({where})", "theta", what,
                      [("proposal", THETAS, [f12["proposal"][t][key] for t in THETAS]),
                       ("TPM", THETAS, [f12["tpm"][key]] * len(THETAS)),
                       ("uniform", THETAS, [f12["uniform"][key]] * len(THETAS))])
    body = "\n".join(f'<figure><img src="{uri}" alt="{title}"><figcaption>{title}</figcaption></figure>'
                     for title, uri in figs)
    rows = "".join(f"<tr><td>{k}</td><td>{v[0]}</td><td>{v[1]:.1f}</td><td>{v[2]:.1f}</td></tr>"
                   for k, v in shape.items() if k != "rho")
    table = (f"<h2>Fig. 8's noise on the paper's hierarchy (Table 2, rho = {shape['rho']}, c = 5, epsilon_2 = 1)</h2>"
             f"<table><tr><th>category</th><th>POIs</th><th>sd, Privelet</th><th>sd, Laplace</th></tr>{rows}</table>"
             "<p>Standard deviation of a category's noisy sum (privacy/privelet.py: top_level_variance). Privelet "
             "with the generalized sensitivity rho that its epsilon needs gains only on categories of more than 28 "
             "POIs here; the paper's 'much smaller' error is not reproduced.</p>")
    page = out / "report.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>Co-location synthesizer: paper 000's "
                    f"figures</title><style>body{{font-family:sans-serif;max-width:1250px;margin:auto}}figure{{display:"
                    f"inline-block;margin:8px}}td,th{{padding:2px 10px;text-align:right}}</style></head><body><h1>"
                    f"Co-location synthesizer: paper 000's figures</h1><p>Averages over {RUNS} runs. Gowalla: 814 "
                    f"users, 100 POIs, one folded day, categories = its quad-tree's top level; Foursquare NYC: 542 "
                    f"users, 100 POIs (co-locations between any two users); simulated: a city of {PAPER_USERS:,} users "
                    f"on 100 POIs, the paper's size.</p>{body}{table}</body></html>")
    return page


def print_figures12_15(where: str, f12: dict) -> None:
    for t in THETAS:
        p = f12["proposal"][t]
        fr = f12["friends"][t]
        together = f"; co-locations per friend pair {fr[0]:.2f}, per non-friend pair {fr[1]:.2f}"
        print(f"Figs. 12-15 {where} theta={t:5d}: pop MAE {p['pop_mae']:.5f} MSE {p['pop_mse']:.2e}, tm MAE "
              f"{p['tm_mae']:.5f} MSE {p['tm_mse']:.2e}{together}")
    for name in ("tpm", "uniform"):
        p = f12[name]
        print(f"Figs. 12-15 {where} {name:8s}: pop MAE {p['pop_mae']:.5f} MSE {p['pop_mse']:.2e}, tm MAE "
              f"{p['tm_mae']:.5f} MSE {p['tm_mse']:.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "locsynth-colocation")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        gowalla, nyc = load(args.data, Path(tmp))
        print(f"Gowalla: {gowalla.n_traces} users, {gowalla.n_events} events, {gowalla.friends.shape[0]} friendships; "
              f"NYC: {nyc.n_traces} users, {nyc.n_events} events")
        f7 = figure7(gowalla)
        print("Fig. 7  |p - p'|: " + ", ".join(f"eps1={e:g}: {v:.2e}" for e, v in f7.items()))
        f8s = {"NYC": figures8_11(nyc), "Gowalla": figures8_11(gowalla)}
        for where, f8 in f8s.items():
            for key, xs, name in (("by_c", TRIMS, "c"), ("by_eps", EPS2, "eps2")):
                for m in ("privelet", "laplace"):
                    print(f"Figs. 8-11 {where} {m:8s} by {name}: " + ", ".join(
                        f"{x:g}: {f8[key][m][x][0]:.2f}/{f8[key][m][x][1]:.1f}" for x in xs) + "  (MAE/MSE)")
        shape = paper_shape_noise()
        print(f"Fig. 8 noise on the paper's Table 2 hierarchy (rho = {shape['rho']}, c = 5, eps2 = 1): " + ", ".join(
            f"{k} ({v[0]} POIs) sd Privelet {v[1]:.1f} / Laplace {v[2]:.1f}" for k, v in shape.items() if k != "rho"))
        f12s = {"Gowalla": figures12_15(gowalla)}
        print_figures12_15("Gowalla", f12s["Gowalla"])
        city = simulate(PAPER_USERS, pois=100, seed=0)
        where = f"simulated {PAPER_USERS:,}"
        f12s[where] = figures12_15(city)
        print(f"simulated city: {city.n_traces} users, {city.n_events} events, {city.friends.shape[0]} friendships")
        print_figures12_15(where, f12s[where])
        page = write_page(args.out, f7, f8s, f12s, shape)
        print(f"figures: {page}")
        s = speed(gowalla, Path(tmp))
        fit, gen = s["gowalla"]
        cfit, cgen = s["commands"]
        print(f"speed, Gowalla {gowalla.n_traces} users: fit {fit:.2f} s, sample {gen:.2f} s; commands: fit {cfit:.2f} s "
              f"({cfit / fit:.1f}x), sample {cgen:.2f} s ({cgen / gen:.1f}x)")
        a, b = s[5_000], s[10_000]
        print(f"growth, simulated city: 5,000 users ({a[2]:,} events, {a[3]:,} friendships) fit {a[0]:.2f} s + sample "
              f"{a[1]:.2f} s; 10,000 users fit {b[0]:.2f} s + sample {b[1]:.2f} s: x{b[0] / a[0]:.2f} and "
              f"x{b[1] / a[1]:.2f} for x2 users")
        print(f"  synthetic friendships {a[4]:,} and {b[4]:,}, co-locations placed {a[5]:,} and {b[5]:,} (p' is "
              f"node-DP: at p near 4 / n its noise 2 / (n epsilon_1) can clamp it to 0, leaving nothing to place)")


if __name__ == "__main__":
    main()
