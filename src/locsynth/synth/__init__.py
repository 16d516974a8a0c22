"""Synthesizers: one module (or package) per method, all following the protocol of base.py."""

from .base import REGISTRY, Synthesizer, load_model
from .baselines import SGD, Training, Uniform
from .ppmtf import PPMTF, PPMTFPlus

__all__ = ["PPMTF", "PPMTFPlus", "REGISTRY", "SGD", "Synthesizer", "Training", "Uniform", "load_model"]
