"""The ``locsynth`` command (DESIGN.md): argument parsing and progress display only.

``root.py`` holds the app and ``main``; each group of commands is a module of its own (``data``,
``methods``, ``evaluation``, ``release``, ``lbs``, ``contest``), and ``common.py`` what they share:
errors as one line, progress, options read from what the library declares.
"""

from . import data, evaluation, lbs, methods, release  # noqa: F401 (each registers its commands on the app)
from .contest import contest_app
from .root import app, main

app.add_typer(contest_app, name="contest")

__all__ = ["app", "main"]
