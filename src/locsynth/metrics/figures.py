"""The metric groups' figures (what each group declares it draws from its details: heatmaps,
histograms, ROC curves, hourly curves), drawn with matplotlib's Agg canvas as PNG bytes; the
report's own plots (trade-offs, epsilon sweeps) in evaluation/report/plots.py use the same canvas.

Figures are built as :class:`matplotlib.figure.Figure` objects without pyplot, so nothing is
registered in pyplot's global state, no window ever opens and each figure is freed with its last
reference. The PNGs carry no software version or date, so the same report gives the same bytes.
"""

from __future__ import annotations

import base64
import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import PowerNorm
from matplotlib.figure import Figure

DPI = 100
COLORS = {"test": "#222222", "synthetic": "#1f77b4", "training": "#ff7f0e", "uniform": "#9a9a9a"}
NAMES = {"test": "test (real)", "synthetic": "synthetic", "training": "training (released as is)",
         "uniform": "uniform"}
#: the colour scale of the heatmaps: probabilities ** 0.5, so that sparse locations stay visible
GAMMA = 0.5


def new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def to_png(fig: Figure) -> bytes:
    """PNG bytes of a figure (no metadata that would change between runs or versions)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    fig.clear()
    return buffer.getvalue()


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def evenly_spaced(n: int, k: int = 4) -> list[int]:
    """``k`` indices spread evenly over ``range(n)``, first and last included (fewer when n < k)."""
    if n <= 0:
        return []
    return sorted(set(np.linspace(0, n - 1, min(k, n)).round().astype(int).tolist()))


def _geo_aspect(lat: np.ndarray) -> float:
    """Axes aspect that makes a degree of longitude as long as it is on the ground."""
    return 1.0 / max(np.cos(np.radians(0.5 * (np.nanmin(lat) + np.nanmax(lat)))), 1e-3)


def _grid_image(p: np.ndarray, space: dict):
    """(image, extent, origin) of a grid distribution; the image's row 0 is the grid's row 0."""
    rows, cols = int(space["rows"]), int(space["cols"])
    lat = np.asarray(space["lat"], float).reshape(rows, cols)[:, 0]
    lon = np.asarray(space["lon"], float).reshape(rows, cols)[0, :]

    def edges(centres):
        step = abs(centres[-1] - centres[0]) / (centres.size - 1) if centres.size > 1 else 0.01
        return min(centres[0], centres[-1]) - step / 2, max(centres[0], centres[-1]) + step / 2

    (lat0, lat1), (lon0, lon1) = edges(lat), edges(lon)
    # imshow's origin='lower' puts image row 0 at the bottom: the south when row 0 is the south
    origin = "lower" if lat[0] <= lat[-1] else "upper"
    image = np.asarray(p, float).reshape(rows, cols)
    if lon[0] > lon[-1]:
        image = image[:, ::-1]
    return image, (lon0, lon1, lat0, lat1), origin


def population_png(population: dict, slot_labels: list[str], space: dict, n_shown: int = 4) -> bytes:
    """Heatmaps of the location distribution in a few slots: test (top row) and synthetic (bottom).

    population : {'test', 'synthetic', ...} -> ndarray of shape (n_slots, n_locations).
    space : {'kind', 'lat', 'lon', 'rows', 'cols'}; a grid is drawn as a rows x cols image with
        the south at the bottom, POIs as a scatter coloured by probability.
    """
    shown = [k for k in ("test", "synthetic") if k in population]
    n_slots = np.asarray(population[shown[0]]).shape[0]
    slots = evenly_spaced(n_slots, n_shown)
    panels = {k: np.asarray(population[k], float)[slots] for k in shown}
    vmax = max(float(np.nanmax(v)) for v in panels.values()) or 1.0
    norm = PowerNorm(GAMMA, vmin=0.0, vmax=vmax)
    lat, lon = np.asarray(space["lat"], float), np.asarray(space["lon"], float)
    grid = space.get("kind") == "grid" and space.get("rows") and space.get("cols")
    fig = new_figure(2.3 * len(slots) + 1.0, 2.35 * len(shown) + 0.3)
    axes = fig.subplots(len(shown), len(slots), squeeze=False, sharex=True, sharey=True)
    mappable = None
    for i, name in enumerate(shown):
        for j, slot in enumerate(slots):
            ax, p = axes[i, j], panels[name][j]
            if grid:
                image, extent, origin = _grid_image(p, space)
                mappable = ax.imshow(image, origin=origin, extent=extent, norm=norm, cmap="viridis",
                                     interpolation="nearest", aspect=_geo_aspect(lat))
            else:
                order = np.argsort(p, kind="stable")  # most probable drawn last, on top
                mappable = ax.scatter(lon[order], lat[order], c=p[order], s=14, norm=norm, cmap="viridis",
                                      linewidths=0)
                ax.set_aspect(_geo_aspect(lat))
                ax.set_facecolor("#f2f2f2")
            label = slot_labels[slot] if slot < len(slot_labels) else f"slot {slot}"
            ax.set_title(f"{NAMES[name]}, {label}", fontsize=9)
            ax.tick_params(labelsize=7)
            ax.locator_params(nbins=3)
            if j == 0:
                ax.set_ylabel("latitude (north up)", fontsize=8)
            if i == len(shown) - 1:
                ax.set_xlabel("longitude", fontsize=8)
    bar = fig.colorbar(mappable, ax=axes.ravel().tolist(), shrink=0.85)
    bar.set_label("probability of the location (square-root colour scale)", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    return to_png(fig)


def emd_rows_png(emd_rows: dict, unit: str = "grid cells") -> bytes:
    """Histograms of the per-row EMD of the transition matrix (y and x), synthetic vs training.

    emd_rows : {'synthetic', 'training'} -> {'y', 'x'} -> ndarray of shape (n_locations,).
    """
    names = [k for k in ("synthetic", "training") if k in emd_rows]
    fig = new_figure(8.0, 2.9)
    axes = fig.subplots(1, 2, squeeze=False)[0]
    for ax, axis, title in zip(axes, ("y", "x"), ("TM-EMD-Y: latitude (north-south)",
                                                  "TM-EMD-X: longitude (east-west)")):
        values = {k: np.asarray(emd_rows[k][axis], float) for k in names}
        finite = np.concatenate([v[np.isfinite(v)] for v in values.values()] or [np.zeros(1)])
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        bins = np.linspace(0.0, top, 31)
        for k in names:
            v = values[k][np.isfinite(values[k])]
            ax.hist(v, bins=bins, histtype="step", linewidth=1.6, color=COLORS[k],
                    label=f"{NAMES[k]} (mean {v.mean():.3g})" if v.size else NAMES[k])
            if v.size:
                ax.axvline(v.mean(), color=COLORS[k], linestyle="--", linewidth=1)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"EMD of a row against the test row ({unit})", fontsize=8)
        ax.set_ylabel("locations (matrix rows)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, frameon=False)
    return to_png(fig)


def visit_fractions_png(visit_fractions: dict) -> bytes:
    """The distribution of visit fractions over bins: test vs synthetic vs training (log scale).

    visit_fractions : {'test', 'synthetic', 'training'} -> ndarray of shape (bins,), summing to 1.
    """
    names = [k for k in ("test", "synthetic", "training") if k in visit_fractions]
    n_bins = np.asarray(visit_fractions[names[0]]).size
    centres = (np.arange(n_bins) + 0.5) / n_bins
    fig = new_figure(6.0, 3.0)
    ax = fig.subplots()
    markers = {"test": "o", "synthetic": "s", "training": "^"}
    for k in names:
        share = np.asarray(visit_fractions[k], float)
        shown = np.where(share > 0, share, np.nan)  # an empty bin has no place on a log axis
        ax.plot(centres, shown, marker=markers[k], markersize=3.5, linewidth=1.3, color=COLORS[k],
                label=NAMES[k])
    ax.set_yscale("log")
    ax.set_xlim(0, 1)
    ax.set_xlabel("visit fraction: share of a trace's events at one location", fontsize=8)
    ax.set_ylabel("share of (trace, location) pairs", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
    ax.legend(fontsize=7, frameon=False)
    return to_png(fig)


def roc_png(mia: dict) -> bytes:
    """ROC curve of the membership-inference attack, with the diagonal of a random guess.

    mia : {'tpr', 'fpr', 'advantage', ...}; tpr and fpr are ndarrays of the same shape.
    """
    tpr, fpr = np.asarray(mia["tpr"], float), np.asarray(mia["fpr"], float)
    fig = new_figure(3.9, 3.7)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], linestyle="--", color=COLORS["uniform"], linewidth=1, label="random guess")
    ax.plot(fpr, tpr, color=COLORS["synthetic"], linewidth=1.6, label="attack on the synthetic traces")
    if tpr.size:
        best = int(np.argmax(tpr - fpr))
        ax.plot([fpr[best], fpr[best]], [fpr[best], tpr[best]], color="#d62728", linewidth=1.4,
                label=f"advantage = {tpr[best] - fpr[best]:.3f}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("false-positive rate (non-members flagged)", fontsize=8)
    ax.set_ylabel("true-positive rate (members found)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    return to_png(fig)


def colocations_png(colocations: dict) -> bytes:
    """Co-locations per pair of friends and per pair of non-friends, synthetic and training sets.

    colocations : {'synthetic': {...}, 'training': {...} (optional)}, each from
    metrics.colocation.friend_colocations.
    """
    sets = [k for k in ("training", "synthetic") if colocations.get(k)]
    fig = new_figure(4.6, 2.8)
    ax = fig.subplots()
    width = 0.38
    x = np.arange(len(sets))
    for i, (key, label) in enumerate((("friends_per_pair", "friends"), ("non_friends_per_pair", "non-friends"))):
        values = [colocations[k][key] for k in sets]
        bars = ax.bar(x + (i - 0.5) * width, values, width, label=label,
                      color=COLORS["synthetic"] if i == 0 else COLORS["uniform"])
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(x, [f"{k} ({colocations[k]['friend_pairs']:,} friend pairs)" for k in sets], fontsize=7)
    ax.set_ylabel("co-located instants per pair", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, frameon=False)
    return to_png(fig)


#: colours of the sets of a comparison, after the training baseline's orange
CYCLE = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")


def hourly_png(curves: dict, y_label: str, title: str, colors: dict | None = None) -> bytes:
    """One line per set over the 24 hours of the day (paper 004 Figures 3 and 4).

    curves : name -> {'by_hour': 24 values (None or NaN where an hour has no trips) or None,
        'overall': float or None}. A set without hours (a trip method at time_share=0) is drawn as a dashed
        horizontal line at its overall value. ``colors`` (name -> colour) first, then the report's
        colours of 'synthetic' and 'training', then :data:`CYCLE` in order.
    """
    fig = new_figure(9.0, 3.4)
    ax = fig.subplots()
    hours = np.arange(24)
    others = iter(CYCLE)
    for i, (name, curve) in enumerate(curves.items()):
        color = (colors or {}).get(name) or COLORS.get(name) or next(others, "#444444")
        label, zorder = NAMES.get(name, name), 3 + len(curves) - i          # the first set drawn on top
        if curve.get("by_hour") is not None:
            values = np.array([np.nan if v is None else v for v in curve["by_hour"]], float)
            ax.plot(hours, values, marker="o", markersize=3.5, linewidth=1.5, color=color, label=label,
                    zorder=zorder)
        elif curve.get("overall") is not None:
            ax.axhline(curve["overall"], color=color, linestyle="--", linewidth=1.5, zorder=zorder,
                       label=f"{label} (no hours: all trips)")
    ax.set_xlim(-0.5, 23.5)
    ax.set_xticks(hours[::2], [f"{h:02d}" for h in hours[::2]])
    ax.set_ylim(0, 1.08 * max(ax.get_ylim()[1], 1e-9))      # room above a flat line at the top
    ax.set_xlabel("hour of the day (the trip's majority hour, local time)", fontsize=8)
    ax.set_ylabel(y_label, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(True, linewidth=0.4, alpha=0.5)
    ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2),
              ncol=min(4, max(1, len(curves))))
    return to_png(fig)


def trip_lengths_png(distributions: dict) -> bytes:
    """The distribution of trip lengths (cells per trip): test vs synthetic vs training.

    distributions : {'test', 'synthetic', 'training'} -> ndarray of shape (max length + 1,), the
        share of trips of each length.
    """
    names = [k for k in ("test", "training", "synthetic") if k in distributions]
    fig = new_figure(9.0, 2.8)
    ax = fig.subplots()
    for k in names:
        share = np.asarray(distributions[k], float)
        ax.step(np.arange(share.size), share, where="mid", linewidth=1.5, color=COLORS[k], label=NAMES[k])
    # up to the length that covers 99.9% of the trips of every set: the longest few would flatten the rest
    shown = max(int(np.searchsorted(np.cumsum(distributions[k]), 0.999 * np.sum(distributions[k]))) for k in names)
    ax.set_xlim(0, shown + 1.5)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("trip length (cells)", fontsize=8)
    ax.set_ylabel("share of trips", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, linewidth=0.4, alpha=0.5)
    ax.legend(fontsize=7, frameon=False)
    return to_png(fig)


def threshold_bars_png(values: dict, labels: dict, threshold: float, y_label: str) -> bytes:
    """Grouped bars, one group per key of ``labels``, one bar per set of ``values`` ({set: {key:
    value or None}}), with a dashed line at ``threshold``."""
    sets = [s for s in values if any(v is not None for v in values[s].values())]
    fig = new_figure(4.6, 2.8)
    ax = fig.subplots()
    width = 0.8 / max(len(sets), 1)
    x = np.arange(len(labels))
    for i, name in enumerate(sets):
        heights = [values[name].get(key) or 0.0 for key in labels]
        bars = ax.bar(x + (i - (len(sets) - 1) / 2) * width, heights, width, label=NAMES.get(name, name),
                      color=COLORS.get(name, COLORS["synthetic"]))
        ax.bar_label(bars, fmt="%.3f", fontsize=7)
    ax.axhline(threshold, linestyle="--", color="#d62728", linewidth=1.2, label=f"threshold {threshold:g}")
    ax.set_xticks(x, list(labels.values()), fontsize=8)
    ax.set_ylabel(y_label, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, frameon=False)
    return to_png(fig)
