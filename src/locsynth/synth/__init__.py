"""Synthesizers: one module (or package) per method, all following the protocol of base.py."""
