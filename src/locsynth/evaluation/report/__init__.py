"""The evaluation report: metrics.json, a self-contained report.html, and comparisons of several runs."""

from .compare import compare, compare_html, comparison, load_metrics, tradeoff_plot, trip_figures
from .html import render_html

__all__ = ["compare", "compare_html", "comparison", "load_metrics", "render_html", "tradeoff_plot",
           "trip_figures"]
