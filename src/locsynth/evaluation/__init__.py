"""Evaluation: the metric groups evaluate runs (``suite.py``), the report pages (``report/``) and
``evaluate`` itself."""
