"""LDPTrace (Du et al., PVLDB 2023): local-DP trajectory synthesis. Each user perturbs their own
trajectory on a public grid (user.py); the collector aggregates the reports into a first-order
mobility model (collector.py) and synthesizes walks from it (model.py)."""

from .model import LDPTrace

__all__ = ["LDPTrace"]
