"""report.html (placeholder until the full template lands)."""

import html
import json


def render_html(report) -> str:
    body = html.escape(json.dumps(report.metrics, indent=2))
    return f"<!doctype html><html><head><meta charset='utf-8'><title>locsynth report</title></head><body><pre>{body}</pre></body></html>"
