"""PPMTF and PPMTF+: tensors -> Gibbs sampling -> MH generation -> PD test (paper 001 §3)."""

from .model import PPMTF, PPMTFPlus

__all__ = ["PPMTF", "PPMTFPlus"]
