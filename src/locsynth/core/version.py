"""The package's version, on the ground floor so that the pages and the release card can state it
without importing the package's face (``locsynth/__init__.py``, which stands above everything)."""

__version__ = "0.2.0"
