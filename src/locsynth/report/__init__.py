"""The evaluation report: metrics.json and a self-contained report.html."""

from .html import render_html

__all__ = ["render_html"]
