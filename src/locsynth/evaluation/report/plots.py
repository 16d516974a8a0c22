"""The report's plots (privacy-utility trade-offs, metrics against epsilon), drawn with matplotlib's
Agg canvas and returned as PNG bytes; the canvas and the metric groups' own figures are in
metrics/figures.py.

Figures are built as :class:`matplotlib.figure.Figure` objects without pyplot, so nothing is
registered in pyplot's global state, no window ever opens and each figure is freed with its last
reference. The PNGs carry no software version or date, so the same report gives the same bytes.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.ticker import NullFormatter

from ...metrics.figures import (COLORS, CYCLE, DPI, GAMMA, NAMES, colocations_png, data_uri,  # noqa: F401
                               emd_rows_png, evenly_spaced, hourly_png, new_figure, population_png, roc_png,
                               to_png, trip_lengths_png, visit_fractions_png)


def tradeoff_png(points: list[tuple[str, float, float, bool]], x_label: str, y_label: str,
                 panels: list[tuple[str, list]] | None = None, frontier: bool = False) -> bytes:
    """Utility loss (y) against privacy risk (x), one labelled point per set; lower-left is better.

    points : (name, x, y, is_baseline); baselines are drawn as grey squares. ``panels`` (x label,
    points) adds panels beside the first with the same y axis (e.g. membership inference beside
    re-identification, which sets of virtual users lack). ``frontier``: also draw the Pareto
    frontier of the points that are not baselines (no other point is lower in both).
    """
    panels = [(x_label, points)] + list(panels or [])
    cols = min(len(panels), 2)                  # two to a row, so that four attacks stay legible
    rows = -(-len(panels) // cols)
    fig = new_figure(5.2 * cols, 4.2 * rows)
    grid = fig.subplots(rows, cols, sharey=True, squeeze=False)
    for extra in grid.ravel()[len(panels):]:
        extra.remove()
    axes = grid.ravel()[:len(panels)]
    arrows = []
    ys = [p[2] for _, pts in panels for p in pts]
    for ax, (label, pts) in zip(axes, panels):
        for name, x, y, baseline in pts:
            color = COLORS["uniform"] if baseline else COLORS["synthetic"]
            ax.scatter([x], [y], s=36, color=color, marker="s" if baseline else "o", zorder=3)
        if frontier:
            front = pareto_front([(x, y) for _, x, y, baseline in pts if not baseline])
            if len(front) > 1:
                ax.step(*zip(*front), where="post", color=COLORS["synthetic"], linewidth=1, alpha=0.6,
                        zorder=2, label="Pareto frontier")
                ax.legend(fontsize=7, loc="upper right")
        xs = [p[1] for p in pts]
        if xs:
            pad_x = 0.08 * ((max(xs) - min(xs)) or max(abs(max(xs)), 1e-3))
            ax.set_xlim(min(min(xs), 0) - pad_x, max(xs) + 3.0 * pad_x)
        if ys:
            pad_y = 0.08 * ((max(ys) - min(ys)) or max(abs(max(ys)), 1e-3))
            ax.set_ylim(min(min(ys), 0) - pad_y, max(ys) + 2.0 * pad_y)
        ax.set_xlabel(f"{label} (privacy risk, lower is better)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        arrows.append(ax.annotate("better", xy=(0.03, 0.03), xytext=(0.13, 0.13), xycoords="axes fraction",
                                  textcoords="axes fraction", fontsize=8, color="#2ca02c",
                                  arrowprops={"arrowstyle": "->", "color": "#2ca02c"}))
    for ax in grid[:, 0]:
        ax.set_ylabel(f"{y_label} (utility loss, lower is better)", fontsize=8)
    fig.canvas.draw()                       # the constrained layout fixes the axes before labels are placed
    renderer = fig.canvas.get_renderer()
    for ax, (_, pts), arrow in zip(axes, panels, arrows):
        # the labels keep off the "better" arrow and its word, as they keep off each other
        _label_points(ax, pts, [tuple(arrow.get_window_extent(renderer).extents),
                                tuple(arrow.arrow_patch.get_window_extent(renderer).extents)])
    return to_png(fig)


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats in both coordinates (lower is better), by increasing x."""
    front: list[tuple[float, float]] = []
    for x, y in sorted(points):
        if not front or y < front[-1][1]:
            front.append((x, y))
    return front


def epsilon_png(panels: list[tuple[str, list[dict]]], columns: int = 3) -> bytes:
    """Small multiples of a metric against epsilon (log scale), one panel per metric.

    panels : (y label, lines); a line is ``{"name", "epsilon": [...], "mean": [...], "sd": [...],
    "baseline": bool}``: a method swept over epsilon is drawn as a line with error bars; one with a
    single value and no epsilon (a baseline, a method without DP) as a horizontal dashed line.
    """
    rows = math.ceil(len(panels) / columns)
    fig = new_figure(3.6 * min(columns, len(panels)), 2.6 * rows + 0.5)
    axes = fig.subplots(rows, min(columns, len(panels)), squeeze=False).ravel()
    names = sorted({line["name"] for _, lines in panels for line in lines if not line["baseline"]})
    color = {name: CYCLE[i % len(CYCLE)] for i, name in enumerate(names)}
    for ax, (label, lines) in zip(axes, panels):
        for line in lines:
            eps, mean, sd = (np.asarray(line[k], np.float64) for k in ("epsilon", "mean", "sd"))
            style = {"color": COLORS.get(line["name"], COLORS["uniform"]) if line["baseline"] else color[line["name"]]}
            if np.isfinite(eps).any():
                ax.errorbar(eps, mean, yerr=np.nan_to_num(sd), marker="o", markersize=3.5, capsize=2,
                            linewidth=1.2, label=line["name"], **style)
            else:
                ax.axhline(float(mean[0]), linestyle="--", linewidth=1, label=line["name"], **style)
        ax.set_xscale("log")
        ticks = sorted({float(e) for line in lines for e in line["epsilon"] if np.isfinite(e)})
        if ticks:
            ax.set_xticks(ticks, [f"{e:g}" for e in ticks])
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(label, fontsize=8.5)
        ax.tick_params(labelsize=7)
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.set_xlabel("epsilon", fontsize=7.5)
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    handles, labels = {}, []
    for ax in axes[:len(panels)]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    fig.legend([handles[lab] for lab in labels], labels, loc="outside lower center", ncols=min(len(labels), 6),
               fontsize=7.5, frameon=False)
    return to_png(fig)


#: where a point's label may go, in points from the point: near first, then farther, on all sides
_LABEL_OFFSETS = tuple((r * dx, r * dy, align) for r in (1, 2, 3, 4.5)
                       for dx, dy, align in ((5, 3, "left"), (5, -11, "left"), (-5, 3, "right"),
                                             (-5, -11, "right"), (0, 9, "center"), (0, -19, "center")))


def _label_points(ax, points, avoid=()) -> None:
    """Label every point once, sets at the same place in one label ("none = cheat"), each label where
    it overlaps the labels already placed, the boxes ``avoid`` (pixels: left, bottom, right, top) and
    the other points least (greedy over rings of offsets, near first), with a thin line back to its
    point when it had to move away."""
    groups: dict[tuple[float, float], list] = {}
    for name, x, y, baseline in points:
        groups.setdefault((round(x, 9), round(y, 9)), []).append((name, baseline))
    to_pixels = ax.transData.transform
    scale = ax.figure.dpi / 72.0
    dots = [tuple(to_pixels(xy)) for xy in groups]
    left_edge, bottom, right_edge, top = ax.get_window_extent().extents
    placed: list[tuple[float, float, float, float]] = list(avoid)
    renderer = ax.figure.canvas.get_renderer()
    for (x, y), members in groups.items():
        name = " = ".join(n for n, _ in members)
        baseline = all(b for _, b in members)
        px, py = to_pixels((x, y))
        probe = ax.text(0, 0, name, fontsize=7.5, parse_math=False)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        width, height = extent.width + 2, extent.height + 1

        def box(offset):
            dx, dy, align = offset
            shift = {"left": 0.0, "right": width, "center": width / 2}[align]
            left = px + dx * scale - shift
            return left, py + dy * scale, left + width, py + dy * scale + height

        def cost(b):
            area = sum(max(0.0, min(b[2], o[2]) - max(b[0], o[0])) * max(0.0, min(b[3], o[3]) - max(b[1], o[1]))
                       for o in placed)
            hits = sum(1 for (qx, qy) in dots if (qx, qy) != (px, py) and b[0] - 3 <= qx <= b[2] + 3
                       and b[1] - 3 <= qy <= b[3] + 3)
            outside = max(0.0, left_edge - b[0]) + max(0.0, b[2] - right_edge) + max(0.0, bottom - b[1]) \
                + max(0.0, b[3] - top)
            return area + 400.0 * hits + 50.0 * outside

        costs = [cost(box(o)) for o in _LABEL_OFFSETS]
        best = _LABEL_OFFSETS[next((i for i, c in enumerate(costs) if c == 0), int(np.argmin(costs)))]
        placed.append(box(best))
        far = abs(best[0]) > 5 or best[1] not in (3, -11)
        ax.annotate(name, (x, y), xytext=best[:2], textcoords="offset points", fontsize=7.5, ha=best[2],
                    va="bottom", color="#666666" if baseline else "#111111", parse_math=False,
                    arrowprops={"arrowstyle": "-", "color": "#bbbbbb", "linewidth": 0.6, "shrinkA": 0,
                                "shrinkB": 3} if far else None)
