"""Anonymizers: methods that perturb traces instead of fitting a model (the protocol is
synth.base.Anonymizer; the methods are imported on first use, see locsynth.synth.registry)."""
