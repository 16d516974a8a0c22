"""The LBS scenario's Figure 6 and page (paper 002 §VII; the scenario is lbs/scenario.py)."""

from __future__ import annotations

import jinja2
import markupsafe
import pandas as pd

from ..evaluation.report.page import page
from ..evaluation.report.plots import data_uri, new_figure, to_png

LABELS = {"sglt": "SGLT (synthetic traces)", "uniform-iid": "Uniform IID", "aggregate-iid": "Agg. mobility IID",
          "rw-aggregate": "RW on agg. mobility", "rw-profile": "RW on user profile"}
MARKERS = {"sglt": "o", "uniform-iid": "s", "aggregate-iid": "^", "rw-aggregate": "D", "rw-profile": "v"}


def lbs_png(table: pd.DataFrame) -> bytes:
    """Figure 6: privacy against (a) bandwidth overhead and (b) profile pollution, one line per
    method through its numbers of fakes."""
    fig = new_figure(10.0, 4.6)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, col, xlabel in zip(axes, ("bandwidth", "pollution"),
                               ("(a) bandwidth overhead: distinct locations per query",
                                "(b) profile pollution: distinct semantic classes per query")):
        for meth, rows in table.groupby("method", sort=False):
            rows = rows.sort_values("fakes")
            ax.plot(rows[col], rows["privacy"], marker=MARKERS.get(meth, "o"), label=LABELS.get(meth, meth))
        ax.set_xlabel(xlabel)
        ax.set_ylim(0.0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("location privacy (adversary's error, median)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize="small", frameon=False)
    return to_png(fig)


_PAGE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(page(
    "<p class=\"note\">{{ what }}</p>\n{{ table }}\n"
    "<figure><img src=\"{{ uri }}\" alt=\"privacy against utility loss\"></figure>\n"))


def lbs_html(table: pd.DataFrame, png: bytes, what: str) -> str:
    """A small page: title, what was run, the table and Figure 6."""
    body = table.to_html(index=False, float_format=lambda v: f"{v:.4f}", border=0)
    return _PAGE.render(title="Fake traces for location-based services (paper 002, Figure 6)", what=what,
                        table=markupsafe.Markup(body), uri=data_uri(png))
