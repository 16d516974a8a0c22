"""What a notebook shows of locsynth's objects: short reprs and small HTML tables (``_repr_html_``)
for a TraceSet, a Space, a fitted model and a Report, instead of dataclass dumps of their arrays.

Nothing here computes anything new: each view reads what the object already states (its summary,
its ledger's headline, its metrics), so that a notebook and ``locsynth info`` say the same.
"""

from __future__ import annotations

import html

import numpy as np


def table(title: str, rows: list[tuple[str, object]]) -> str:
    """An HTML table of (name, value) rows under a bold title."""
    body = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(str(k))}</th>"
                   f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return f"<div><b>{html.escape(title)}</b><table>{body}</table></div>"


def space_rows(space) -> list[tuple[str, object]]:
    if space.kind == "grid":
        lat0, lat1, lon0, lon1 = space.bbox
        rows = [("space", f"grid of {space.rows} x {space.cols} cells ({space.n_locations:,} locations)"),
                ("box", f"lat {lat0:.4f}..{lat1:.4f}, lon {lon0:.4f}..{lon1:.4f}")]
        if space.domain is not None:
            rows.append(("domain", f"{space.domain} ({space.n_allowed:,} cells allowed; public)"))
        return rows
    rows = [("space", f"{space.n_locations:,} POIs")]
    if space.category is not None:
        rows.append(("categories", f"{np.unique(space.category).size:,}"))
    return rows


def traceset_rows(ts) -> list[tuple[str, object]]:
    s = ts.summary()
    rows = [("users", f"{s['users']:,}"), ("traces", f"{s['traces']:,}"), ("events", f"{s['events']:,}")]
    rows += space_rows(ts.space)
    rows.append(("time axis", ts.time.describe()))
    if "first" in s:
        rows.append(("period", f"{s['first'][:10]} .. {s['last'][:10]} ({s['days']} days)"))
    rows.append(("times", "real datetimes" if ts.has_times else "none: steps only (its method released no time)"))
    if ts.synthetic:
        rows.append(("made by", ts.info.get("synthesizer") or ts.info.get("source") or "a method"))
    if ts.ledger:
        rows.append(("privacy", ts.ledger.describe()[0]))
    return rows


def mini_map(ts, size: int = 180, most: int = 3000) -> str:
    """A small inline SVG map of ``ts``: a dot per visited location (its ``most`` busiest), darker
    where visits are many (log scale), in longitude and latitude with the aspect of the place.
    Plain SVG, so a notebook shows it with nothing fetched and no plotting library imported."""
    if not ts.n_events or not ts.space.n_locations:
        return ""
    lat, lon = np.asarray(ts.space.lat, float), np.asarray(ts.space.lon, float)
    visits = np.bincount(ts.loc[ts.loc >= 0], minlength=ts.space.n_locations)
    seen = np.flatnonzero(visits)
    seen = seen[np.argsort(-visits[seen], kind="stable")[:most]]
    x_scale = np.cos(np.radians(np.median(lat[seen])))
    x, y = lon[seen] * x_scale, lat[seen]
    span = max(np.ptp(x), np.ptp(y), 1e-9)
    px = 6 + (x - x.min() + (span - np.ptp(x)) / 2) / span * (size - 12)
    py = size - 6 - (y - y.min() + (span - np.ptp(y)) / 2) / span * (size - 12)
    shade = np.log1p(visits[seen]) / np.log1p(visits[seen].max())
    dots = "".join(f"<circle cx='{a:.1f}' cy='{b:.1f}' r='1.6' fill-opacity='{0.15 + 0.85 * c:.2f}'/>"
                   for a, b, c in zip(px, py, shade))
    return (f"<svg width='{size}' height='{size}' viewBox='0 0 {size} {size}' role='img' "
            f"aria-label='visits per location' style='border:1px solid #ccc'>"
            f"<g fill='#1f77b4'>{dots}</g></svg>")


def traceset_html(ts) -> str:
    """The TraceSet's table beside its small map."""
    return (f"<div style='display:flex;gap:1.5em;align-items:flex-start'>{table('TraceSet', traceset_rows(ts))}"
            f"<div>{mini_map(ts)}<div style='font-size:smaller'>visits per location</div></div></div>")


def traceset_repr(ts) -> str:
    made = f", made by {ts.info.get('synthesizer') or ts.info.get('source')}" if ts.synthetic else ""
    space = (f"grid {ts.space.rows}x{ts.space.cols}" if ts.space.kind == "grid"
             else f"{ts.space.n_locations} POIs")
    return (f"TraceSet({ts.n_users:,} users, {ts.n_traces:,} traces, {ts.n_events:,} events, {space}, "
            f"{ts.time.timezone}{made})")


def model_rows(model) -> list[tuple[str, object]]:
    rows = [(name, repr(value)) for name, value in model.get_params().items()]
    fitted = hasattr(model, "ledger_")
    rows.append(("fitted", "yes" if fitted else "no"))
    if fitted:
        summary = model.summary() if hasattr(model, "summary") else {}
        rows += [(f"fitted {k}", v) for k, v in summary.items() if k not in model.get_params()]
        if model.ledger_:
            rows.append(("privacy", model.ledger_.describe()[0]))
    return rows


def report_frame(report):
    """The report's metrics as a DataFrame: a row per metric, a column per compared set
    (``synthetic``, ``training``, ``uniform`` ... where they apply)."""
    import pandas as pd

    rows = {k: v for k, v in report.metrics.items() if isinstance(v, dict)}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "metric"
    return frame


def report_html(report) -> str:
    method = (report.meta or {}).get("method")
    title = f"locsynth evaluation: {method}" if method else "locsynth evaluation"
    frame = report_frame(report)
    return f"<div><b>{html.escape(title)}</b>{frame.to_html(float_format=lambda v: f'{v:.4g}', na_rep='-')}</div>"


def plot_traces(ts, n: int = 100, ax=None, seed: int = 0, density: bool = True):
    """A map of ``ts`` on matplotlib: the visits per location as a faint background (``density``),
    and ``n`` traces drawn at random (seeded) as lines in longitude and latitude; no tiles, nothing
    fetched. Returns the Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    lat, lon = ts.space.lat, ts.space.lon
    if density and ts.n_events:
        visits = np.bincount(ts.loc[ts.loc >= 0], minlength=ts.space.n_locations)
        seen = visits > 0
        ax.scatter(lon[seen], lat[seen], s=8, c=np.log1p(visits[seen]), cmap="Blues", alpha=0.6, linewidths=0)
    rows = np.random.default_rng(seed).permutation(ts.n_traces)[:n]
    for i in rows:
        _, loc = ts.events_of(int(i))
        loc = loc[loc >= 0]
        if loc.size:
            ax.plot(lon[loc], lat[loc], lw=0.8, alpha=0.7, marker="o" if loc.size == 1 else None, ms=2)
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.set_aspect(1 / np.cos(np.radians(np.median(lat))) if lat.size else 1.0)
    ax.set_title(f"{min(n, ts.n_traces)} of {ts.n_traces:,} traces")
    return ax
