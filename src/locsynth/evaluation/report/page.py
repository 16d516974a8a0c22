"""The frame every HTML page of locsynth shares: the head, the style and the title; each page (the
evaluation report, the comparison, the benchmark's leaderboard, the contest's results) adds its own
rules and body. A page is one self-contained file: inline CSS, plots as base64 PNG."""

from __future__ import annotations

#: the style the pages share
BASE_CSS = """body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; margin: 0;
       background: #fafafa; }
main { max-width: 1080px; margin: 0 auto; padding: 1.2em 1.5em 3em; background: #fff; }
h1 { font-size: 1.5em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { padding: 0.3em 0.7em; border-bottom: 1px solid #e4e4e4; text-align: right;
         font-variant-numeric: tabular-nums; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption, .note { color: #555; font-size: 0.9em; }
.wide { overflow-x: auto; }
"""


def page(body: str, css: str = "") -> str:
    """A Jinja template: an HTML page titled ``{{ title }}`` (also its heading) with the shared
    style, then ``css``, around ``body``."""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>{{ title }}</title>\n<style>\n" + BASE_CSS + css + "</style>\n</head>\n<body>\n<main>\n"
            "<h1>{{ title }}</h1>\n" + body + "</main>\n</body>\n</html>\n")
